//! `reticle_record`, a family: `start` recording the agent's own acts or a person's in the page,
//! `stop` to answer the steps (each element named as a user would, with each `until` and the
//! assertion grade), saved as a flow when named. The recording itself is
//! [`crate::tools::recording`]; this module must not store a flow but through
//! [`super::flow_save::store_flow`].

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use super::flow_save::store_flow;
use super::recorded::{NOTHING_TO_SAVE, recorded_steps, unnamed_acts};
use crate::bridge::Session;
use crate::flow::model::Flow;
use crate::tools::call::Call;
use crate::tools::commands::{COMMAND_BOUND, Outcome, command, refusal_for};
use crate::tools::recording::Recording;
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::{FlowStep, RecordAction, RecordArgs, RecordSource};
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, Registration, SessionUse, Tool};
use crate::wire::CommandName;

/// Why a person's recording could not begin, in the refusal's `cause`.
const SDK_CANNOT_RECORD: &str = "sdk_cannot_record";

/// Names each person's recording this daemon asks a page for, so `stop` takes its own.
static NEXT_RECORDING: AtomicU64 = AtomicU64::new(1);

async fn record(call: &Call<'_>, a: RecordArgs) -> Result<Value, Refusal> {
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
        call.ctx.workspace(),
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

/// `reticle_record`, as the registry knows it.
pub struct Record;

impl Tool for Record {
    const NAME: ToolName = ToolName::Record;
    const TITLE: &'static str = "Record steps";
    const EFFECT: Effect = Effect::Changes;
    const DESCRIPTION: &'static str = "Record a flow: action start (source agent: the agent's own act, act_sequence and act_and_wait calls on the session; source person: the person's clicks and typing in the page), stop (the steps, each element named as a user would, with each `until` and the assertion grade; `name` saves them as a flow). Typed secrets become placeholders.";
    const OUTPUT: &'static [&'static str] = &[
        "action",
        "source",
        "startPath",
        "steps",
        "assertions",
        "notes",
        "saved",
    ];
    const SESSION: SessionUse = SessionUse::Bound;
    type Args = RecordArgs;

    fn run<'a>(call: &'a Call<'a>, a: RecordArgs) -> Answer<'a> {
        Box::pin(record(call, a))
    }
}

/// `reticle_record_start`, a member of its family.
pub const RECORD_START: Registration = Registration::member::<RecordArgs>(
    ToolName::RecordStart,
    "reticle_record {action:\"start\", source?}: begin recording the agent's acts or a person's.",
);

/// `reticle_record_stop`, a member of its family.
pub const RECORD_STOP: Registration = Registration::member::<RecordArgs>(
    ToolName::RecordStop,
    "reticle_record {action:\"stop\", name?}: end the recording; its steps, saved as a flow when named.",
);
