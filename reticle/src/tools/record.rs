//! Recording tools. `reticle_record {start, stop}`: with source `agent` (the default) the
//! agent's own acts on the session are recorded ([`super::recording`]); with source `person` the
//! page's SDK records a person's clicks and typing (the `record` command; a page whose SDK
//! cannot, such as the published 2.0.0, is a refusal naming that cause, within a command's
//! bound). Starting again restarts (what was held is discarded, and said so); `stop` answers
//! the steps with their assertion grade and, given a `name`, saves them as a flow (stopping when
//! nothing records answers `stopped: false`; an empty recording saves nothing and says why). A person's recording arrives as the page's `flow.recorded` event, the latest of
//! which the bridge keeps per session id; `reticle_flow_save_recorded` saves it as a flow.
//! Recorded steps name elements as a user would; a value typed into a secret field is a
//! placeholder before it is kept, answered or saved.
//!
//! This module answers the recording tools; it must not act on the page nor write files but
//! through [`super::flows::store_flow`].

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value, json};

use super::args::{
    Action, ActionArgs, FlowSaveRecordedArgs, FlowStep, PredicateArg, RecordAction, RecordArgs,
    RecordSource, Target,
};
use super::call::Call;
use super::flows::store_flow;
use super::page::{COMMAND_BOUND, Outcome, command, refusal_for};
use super::recording::Recording;
use super::refusal::Refusal;
use crate::bridge::Session;
use crate::flow::model::{Flow, hide_typed_value};
use crate::wire::CommandName;

/// Why a person's recording could not begin, in the refusal's `cause`.
const SDK_CANNOT_RECORD: &str = "sdk_cannot_record";
/// Why a recording with no steps saves no flow (not an error: nothing was done to save).
const NOTHING_TO_SAVE: &str =
    "the recording has no steps, so there is no flow to save (a flow has at least one step)";
/// What the published recorder writes in place of a sensitive field's value.
const PUBLISHED_REDACTED: &str = "[REDACTED]";

/// Names each person's recording this daemon asks a page for, so `stop` takes its own.
static NEXT_RECORDING: AtomicU64 = AtomicU64::new(1);

pub(super) async fn record(call: &Call<'_>, a: RecordArgs) -> Result<Value, Refusal> {
    let session = call.session()?;
    match a.action {
        RecordAction::Start => start(call, session, a.source.unwrap_or(RecordSource::Agent)).await,
        RecordAction::Stop => stop(call, session, a).await,
    }
}

async fn start(
    call: &Call<'_>,
    session: &Arc<Session>,
    source: RecordSource,
) -> Result<Value, Refusal> {
    let active = call.ctx.host.remember(session.id(), |m| {
        m.recording.as_ref().map(|r| (r.source, r.steps.len()))
    });
    match active {
        Some((other, _)) if other != source => {
            return Err(Refusal::new(
                format!(
                    "a recording of the {} is in progress on session {}; nothing was started",
                    source_word(other),
                    session.id()
                ),
                "stop it with reticle_record {\"action\":\"stop\"} (give `name` to save it), then start again",
            ));
        }
        _ => {}
    }
    let mut recording = Recording::new(source, &session.identity().url);
    let note = match source {
        RecordSource::Agent => {
            "the agent's reticle_act, reticle_act_sequence and reticle_act_and_wait calls on this session are recorded, each element named as a user would name it, with each `until`; stop with reticle_record {\"action\":\"stop\"}"
        }
        RecordSource::Person => {
            let id = format!("r{}", NEXT_RECORDING.fetch_add(1, Ordering::Relaxed));
            match command(
                session,
                CommandName::Record,
                json!({ "action": "start", "id": id }),
                COMMAND_BOUND,
            )
            .await
            {
                Outcome::Done(_) => {}
                Outcome::Refused(why) => return Err(cannot_record(session, &why)),
                other => return Err(refusal_for(CommandName::Record.as_str(), other)),
            }
            recording.person_id = Some(id);
            "the person's clicks and typing in the page are recorded, each element named as a user would name it; stop with reticle_record {\"action\":\"stop\"}"
        }
    };
    let start_path = recording.start_path.clone();
    call.ctx
        .host
        .remember(session.id(), |m| m.recording = Some(recording));
    let mut answer = json!({
        "ok": true,
        "action": "start",
        "source": source,
        "startPath": start_path,
        "note": note,
    });
    // Starting again restarts: what the recording held is discarded, and said so.
    if let Some((_, discarded)) = active {
        answer["restarted"] = json!(true);
        answer["discardedSteps"] = json!(discarded);
    }
    Ok(answer)
}

fn source_word(source: RecordSource) -> &'static str {
    match source {
        RecordSource::Agent => "agent's acts",
        RecordSource::Person => "person's clicks and typing",
    }
}

/// The refusal for a page whose SDK does not record a person.
fn cannot_record(session: &Session, why: &str) -> Refusal {
    let sdk = session
        .identity()
        .sdk_version
        .unwrap_or_else(|| "version not reported".into());
    Refusal::new(
        format!(
            "this page cannot record a person's clicks and typing: its SDK ({sdk}) answered `record` with \"{why}\" (the published @reticlehq/browser 2.0.0 does not record on request); nothing was started"
        ),
        "load Reticle's own SDK in the page (the daemon serves it at /sdk/reticle.js), or record the agent's own acts with reticle_record {\"action\":\"start\"}",
    )
    .with("cause", SDK_CANNOT_RECORD)
    .with("pageError", why)
}

async fn stop(call: &Call<'_>, session: &Arc<Session>, a: RecordArgs) -> Result<Value, Refusal> {
    let Some(recording) = call.ctx.host.remember(session.id(), |m| m.recording.take()) else {
        let nothing = format!("no recording is in progress on session {}", session.id());
        if a.name.is_some() {
            return Err(Refusal::new(
                format!("{nothing}; nothing was saved"),
                "start one with reticle_record {\"action\":\"start\"} (source agent or person)",
            ));
        }
        // Idempotent: stopping twice answers `stopped: false`.
        return Ok(json!({ "ok": true, "action": "stop", "stopped": false, "note": nothing }));
    };
    let (steps, notes) = match recording.source {
        RecordSource::Agent => (recording.steps, recording.notes),
        RecordSource::Person => person_steps(call, session, &recording).await?,
    };
    let start_path = a.start_path.unwrap_or(recording.start_path);
    let mut answer = json!({
        "ok": true,
        "action": "stop",
        "stopped": true,
        "source": recording.source,
        "startPath": start_path,
        "stepCount": steps.len(),
        "steps": steps,
    });
    if !notes.is_empty() {
        answer["notes"] = json!(notes);
    }
    if !steps.is_empty() {
        let draft = Flow {
            name: String::new(),
            start_path: start_path.clone(),
            paths: Vec::new(),
            steps: steps.clone(),
        };
        answer["assertions"] = json!(draft.grading());
    }
    let Some(name) = a.name else {
        answer["note"] = json!(
            "save these steps with reticle_flow_save (or stop with `name` to save them at once)"
        );
        return Ok(answer);
    };
    if steps.is_empty() {
        answer["saved"] = json!(false);
        answer["why"] = json!(NOTHING_TO_SAVE);
        return Ok(answer);
    }
    let unlocated = notes.iter().filter(|n| n.get("tried").is_some()).count();
    if unlocated > 0 {
        return Err(unnamed_acts(unlocated, &answer["steps"], &notes));
    }
    let (flow, secrets) = Flow::checked(name, start_path, Vec::new(), steps)
        .map_err(|problem| Refusal::bad_arguments(call.tool.as_str(), &problem))?;
    answer["saved"] = store_flow(
        &call.ctx.host.workspace,
        &flow,
        &secrets,
        a.overwrite == Some(true),
    )?;
    Ok(answer)
}

/// Stops the page's recording of a person and reads its steps from the `flow.recorded` it sent.
async fn person_steps(
    call: &Call<'_>,
    session: &Arc<Session>,
    recording: &Recording,
) -> Result<(Vec<FlowStep>, Vec<Value>), Refusal> {
    match command(
        session,
        CommandName::Record,
        json!({ "action": "stop" }),
        COMMAND_BOUND,
    )
    .await
    {
        Outcome::Done(_) => {}
        Outcome::Refused(why) => {
            return Err(Refusal::new(
                format!(
                    "the page did not stop a recording (\"{why}\"): a person's recording lives as long as the page's document, so a reload or navigation since it began ended it; nothing was saved"
                ),
                "start again with reticle_record {\"action\":\"start\",\"source\":\"person\"} and stop before the page reloads",
            )
            .with("pageError", why));
        }
        other => return Err(refusal_for(CommandName::Record.as_str(), other)),
    }
    let latest = call.ctx.bridge.latest_recorded(session.id());
    let ours = latest
        .filter(|r| r.data.get("id").and_then(Value::as_str) == recording.person_id.as_deref());
    let Some(recorded) = ours else {
        return Err(Refusal::new(
            "the page stopped recording but its recording (flow.recorded) did not arrive; nothing was saved",
            "call reticle_flow_save_recorded once the page has sent it, or record again",
        ));
    };
    recorded_steps(&recorded.data).map_err(|why| {
        Refusal::new(
            format!("the page's recording could not be read: {why}"),
            "record again; if it repeats, report it with reticle_feedback",
        )
    })
}

pub(super) fn flow_save_recorded(
    call: &Call<'_>,
    a: FlowSaveRecordedArgs,
) -> Result<Value, Refusal> {
    let session = call.session()?;
    let Some(recorded) = call.ctx.bridge.latest_recorded(session.id()) else {
        return Err(Refusal::new(
            format!(
                "no person's recording has arrived from session {}; nothing was saved",
                session.id()
            ),
            "start one with reticle_record {\"action\":\"start\",\"source\":\"person\"}, let the person click and type, then stop it with reticle_record {\"action\":\"stop\"}",
        )
        .with("cause", "no_recording"));
    };
    let unreadable = |why: String| {
        Refusal::new(
            format!("the page's latest recording could not be read: {why}; nothing was saved"),
            "record again; if it repeats, report it with reticle_feedback",
        )
    };
    let (steps, notes) = recorded_steps(&recorded.data).map_err(unreadable)?;
    let flow = recorded.data.get("flow");
    let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_string);
    let name = a
        .name
        .or_else(|| text(recorded.data.get("name")))
        .unwrap_or_else(|| "recorded-flow".into());
    let start_path = a
        .start_path
        .or_else(|| text(flow.and_then(|f| f.get("startPath"))))
        .unwrap_or_else(|| "/".into());
    if !notes.is_empty() {
        return Err(unnamed_acts(notes.len(), &json!(steps), &notes));
    }
    if steps.is_empty() {
        return Ok(json!({
            "ok": true,
            "saved": false,
            "stepCount": 0,
            "why": NOTHING_TO_SAVE,
            "recordedAt": recorded.received_at,
        }));
    }
    let (flow, secrets) = Flow::checked(name, start_path, Vec::new(), steps)
        .map_err(|problem| Refusal::bad_arguments(call.tool.as_str(), &problem))?;
    let mut answer = store_flow(
        &call.ctx.host.workspace,
        &flow,
        &secrets,
        a.overwrite == Some(true),
    )?;
    answer["saved"] = json!(true);
    answer["source"] = json!(RecordSource::Person);
    answer["recordedAt"] = json!(recorded.received_at);
    Ok(answer)
}

/// The refusal for a recording some of whose acts could not be named as a user would.
fn unnamed_acts(count: usize, steps: &Value, notes: &[Value]) -> Refusal {
    Refusal::new(
        format!(
            "{count} recorded acts could not be named as a user would (see `notes`); no flow was saved"
        ),
        "save the steps you want with reticle_flow_save, naming the missing elements by testid, role and name or label",
    )
    .with("steps", steps.clone())
    .with("notes", json!(notes))
}

/// The steps of a page's `flow.recorded` data (`{name, id?, flow:{startPath?, steps}}`), each
/// step either Reticle's SDK's (`target`, `action`, `args`, `until`, `sensitive`) or the
/// published recorder's (`anchor` testid or role, `action`, `args`); a sensitive value becomes
/// its placeholder. Steps whose element has no user-facing name are returned as notes.
pub(super) fn recorded_steps(
    data: &Map<String, Value>,
) -> Result<(Vec<FlowStep>, Vec<Value>), String> {
    let steps = data
        .get("flow")
        .and_then(|f| f.get("steps"))
        .and_then(Value::as_array)
        .ok_or("it has no `flow.steps` list")?;
    let mut out = Vec::new();
    let mut notes = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let field = |key: &str| step.get(key).cloned().unwrap_or(Value::Null);
        let action: Action = serde_json::from_value(field("action"))
            .map_err(|e| format!("step {}: `action`: {e}", i + 1))?;
        let Some(target) = target_of(step)? else {
            notes.push(json!({
                "step": i + 1,
                "act": action.as_str(),
                "why": "the page could not name this element as a user would",
                "tried": [],
            }));
            continue;
        };
        let mut args: Option<ActionArgs> = match field("args") {
            Value::Null => None,
            other => Some(
                serde_json::from_value(other)
                    .map_err(|e| format!("step {}: `args`: {e}", i + 1))?,
            ),
        };
        let sensitive = step.get("sensitive") == Some(&Value::Bool(true))
            || args
                .as_ref()
                .and_then(|a| a.value.as_ref())
                .is_some_and(|v| v == PUBLISHED_REDACTED);
        if sensitive {
            let a = args.get_or_insert_default();
            if a.value.is_none() && a.text.is_none() {
                a.value = Some(Value::Null);
            }
            hide_typed_value(a, &target, out.len() + 1);
        }
        let until = match field("until") {
            Value::Null => None,
            other => Some(PredicateArg(other)),
        };
        out.push(FlowStep {
            target,
            action,
            args,
            until,
            timeout_ms: None,
        });
    }
    Ok((out, notes))
}

/// A recorded step's element as a user names it; `None` when the page could not name it.
fn target_of(step: &Value) -> Result<Option<Target>, String> {
    if let Some(target) = step.get("target") {
        let target: Target =
            serde_json::from_value(target.clone()).map_err(|e| format!("a `target`: {e}"))?;
        return Ok(crate::flow::model::names_an_element(&target).then_some(target));
    }
    let anchor = step.get("anchor").cloned().unwrap_or(Value::Null);
    let text = |key: &str| anchor.get(key).and_then(Value::as_str).map(str::to_string);
    Ok(match text("kind").as_deref() {
        Some("testid") => text("value").map(|testid| Target {
            testid: Some(testid),
            ..Target::default()
        }),
        Some("role") if text("role").is_some_and(|r| r != "unresolved") => Some(Target {
            role: text("role"),
            name: text("name"),
            ..Target::default()
        }),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recording_of_either_sdk_becomes_steps_with_secrets_as_placeholders() {
        let ours = json!({"name": "sign-in", "id": "r1", "flow": {"startPath": "/", "steps": [
            {"target": {"label": "Username"}, "action": "fill", "args": {"value": "ann"}},
            {"target": {"label": "Password"}, "action": "fill", "sensitive": true},
            {"target": {"role": "button", "name": "Sign in"}, "action": "click",
             "until": {"kind": "signal", "name": "login.succeeded"}},
            {"target": {"css": "#x"}, "action": "click"}
        ]}});
        let (steps, notes) = recorded_steps(ours.as_object().unwrap()).unwrap();
        assert_eq!(steps.len(), 3);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert_eq!(
            json!(steps[1].args),
            json!({"value": {"fromEnv": "RETICLE_SECRET_PASSWORD"}})
        );
        assert!(steps[2].until.is_some());

        let published = json!({"name": "x", "flow": {"version": 1, "steps": [
            {"tool": "reticle_act", "anchor": {"kind": "testid", "value": "login-password"},
             "action": "fill", "args": {"value": "[REDACTED]"}},
            {"tool": "reticle_act", "anchor": {"kind": "role", "role": "unresolved"},
             "action": "click", "degraded": true}
        ]}});
        let (steps, notes) = recorded_steps(published.as_object().unwrap()).unwrap();
        assert_eq!(
            json!(steps[0]),
            json!({"target": {"testid": "login-password"}, "action": "fill",
                   "args": {"value": {"fromEnv": "RETICLE_SECRET_LOGIN_PASSWORD"}}})
        );
        assert_eq!(notes.len(), 1);
        assert!(recorded_steps(json!({"name": "x"}).as_object().unwrap()).is_err());
    }
}
