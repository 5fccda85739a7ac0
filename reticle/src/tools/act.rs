//! Acting on the page: `reticle_act` and `reticle_act_sequence` dispatch and report the effect
//! (they return `since` and an `actionId` and prove nothing); `reticle_act_and_wait` acts, waits
//! for its `until` predicate (or for the page to settle) and returns a verdict decided by
//! `verdict::decide`, with a digest of what the app did and the cursor to read all of it. A red
//! verdict leaves a capsule under `.reticle/capsules/`.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tracing::Instrument;
use tracing::field::Empty;

use super::args::{ActAndWaitArgs, ActArgs, ActSequenceArgs, Action, ActionArgs, Target};
use super::capsules;
use super::chokepoint::{Call, bound};
use super::page::{COMMAND_BOUND, LivePage, Outcome, ask, command, refusal_for};
use super::refusal::Refusal;
use super::verify::{digest, verdict_value};
use crate::bridge::{Cursor, Session};
use crate::verdict::decide::Context;
use crate::verdict::predicate::Predicate;
use crate::verdict::{Evaluation, Verified, decide, wait_until};
use crate::wire::CommandName;
use crate::wire::trace::span;

/// What act and act_sequence say about themselves.
pub const PROVES_NOTHING: &str = "this only dispatched the action; it proves nothing about the app: check the outcome with reticle_assert (since this cursor) or use reticle_act_and_wait";
/// How long act_and_wait waits by default.
pub const DEFAULT_WAIT: Duration = Duration::from_millis(4000);
/// How quiet the page must be to count as settled when no `until` is given.
pub const SETTLE_QUIET_MS: u64 = 500;

/// The ref an action is for: given, or the one element a target matches.
async fn element_ref(
    call: &Call<'_>,
    session: &Session,
    given: Option<String>,
    target: Option<Target>,
) -> Result<String, Refusal> {
    match (given, target) {
        (Some(r), None) => Ok(r),
        (None, Some(t)) => {
            let criteria = t.criteria();
            if criteria.is_empty() {
                return Err(Refusal::bad_arguments(
                    call.tool.as_str(),
                    "field `target`: give testid, role (and name), text, label, placeholder, alt or css",
                ));
            }
            let mut args = criteria.clone();
            args.insert("limit".into(), json!(5));
            let found = ask(session, CommandName::Query, Value::Object(args)).await?;
            // Protocol 1 answers `query` with `{elements, hint?}`: the matches are the elements
            // listed (the published 2.0.0 SDK sends no `count`; ours adds one, counting past the
            // limit, which only makes an ambiguity message more precise).
            let elements = found.get("elements").cloned().unwrap_or(json!([]));
            let listed = elements.as_array().map_or(0, Vec::len) as u64;
            let count = found
                .get("count")
                .and_then(Value::as_u64)
                .map_or(listed, |c| c.max(listed));
            match count {
                1 => elements[0]
                    .get("ref")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .ok_or_else(|| Refusal::new("the page answered a match without a ref", "retry")),
                0 => Err(Refusal::new(
                    format!("no element matches the target {}; nothing was done", Value::Object(criteria)),
                    "look at the page with reticle_snapshot or reticle_query and name an element that is there",
                )
                .with("hint", found.get("hint").cloned().unwrap_or(Value::Null))),
                n => Err(Refusal::new(
                    format!("{n} elements match the target {}; an action needs exactly one, so nothing was done", Value::Object(criteria)),
                    "narrow the target (add name or testid) or pass the ref of the one you mean",
                )
                .with("candidates", elements)),
            }
        }
        _ => Err(Refusal::bad_arguments(
            call.tool.as_str(),
            "give exactly one of `ref` and `target`",
        )),
    }
}

fn act_args(element_ref: &str, action: Action, args: Option<ActionArgs>) -> Value {
    let mut map = Map::new();
    if let Some(a) = args {
        if let Some(v) = a.value {
            map.insert("value".into(), v);
        }
        if let Some(t) = a.text {
            map.insert("text".into(), json!(t));
        }
        if let Some(k) = a.key {
            map.insert("key".into(), json!(k));
        }
        if let Some(c) = a.confirm_dangerous {
            map.insert("confirmDangerous".into(), json!(c));
        }
    }
    json!({ "ref": element_ref, "action": action.as_str(), "args": map })
}

/// Opens an action window at the page's head; returns (actionId, since).
fn begin(call: &Call<'_>, session: &Session) -> (String, Cursor) {
    let since = session.head();
    let id = call.ctx.host.remember(session.id(), |m| {
        if let Some((previous, _)) = m.actions.last().cloned() {
            m.end_action(&previous, since);
        }
        m.begin_action(since)
    });
    (id, since)
}

pub(super) async fn act(call: &Call<'_>, a: ActArgs) -> Result<Value, Refusal> {
    let session = call.session()?;
    let r = element_ref(call, session, a.element_ref, a.target).await?;
    let (action_id, since) = begin(call, session);
    let result = ask(session, CommandName::Act, act_args(&r, a.action, a.args)).await?;
    let mut answer = json!({
        "ok": true,
        "actionId": action_id,
        "since": since,
        "ref": r,
        "action": a.action.as_str(),
        "dispatched": result.get("dispatched").cloned().unwrap_or(json!(true)),
        "settled": result.get("settled").cloned().unwrap_or(Value::Null),
        "effect": result.get("effect").cloned().unwrap_or(Value::Null),
        "note": PROVES_NOTHING,
    });
    if let Some(w) = result.get("warning") {
        answer["warning"] = w.clone();
    }
    Ok(answer)
}

pub(super) async fn act_sequence(call: &Call<'_>, a: ActSequenceArgs) -> Result<Value, Refusal> {
    let session = call.session()?;
    let per_step = bound(a.timeout_ms, COMMAND_BOUND);
    let (action_id, since) = begin(call, session);
    let total = a.steps.len();
    let mut done = Vec::new();
    for (i, step) in a.steps.into_iter().enumerate() {
        let outcome = match element_ref(call, session, step.element_ref, step.target).await {
            Ok(r) => {
                match command(
                    session,
                    CommandName::Act,
                    act_args(&r, step.action, step.args),
                    per_step,
                )
                .await
                {
                    Outcome::Done(result) => Ok(json!({
                        "ref": r,
                        "action": step.action.as_str(),
                        "dispatched": result.get("dispatched").cloned().unwrap_or(json!(true)),
                        "effect": result.get("effect").cloned().unwrap_or(Value::Null),
                    })),
                    other => Err(refusal_for("act", other)),
                }
            }
            Err(refusal) => Err(refusal),
        };
        match outcome {
            Ok(step) => done.push(step),
            Err(refusal) => {
                return Ok(json!({
                    "ok": false,
                    "actionId": action_id,
                    "since": since,
                    "completed": done.len(),
                    "total": total,
                    "stalledAt": i,
                    "reason": format!("step {} of {total} failed after {} completed: {}", i + 1, done.len(), refusal.reason),
                    "recovery": refusal.recovery,
                    "steps": done,
                    "note": PROVES_NOTHING,
                }));
            }
        }
    }
    Ok(json!({
        "ok": true,
        "actionId": action_id,
        "since": since,
        "completed": done.len(),
        "total": total,
        "steps": done,
        "note": PROVES_NOTHING,
    }))
}

/// Parses a predicate argument strictly; a predicate that does not parse produces no verdict.
pub(super) fn predicate_of(tool: &str, field: &str, value: &Value) -> Result<Predicate, Refusal> {
    crate::verdict::parse(value).map_err(|e| {
        Refusal::new(
            format!("{tool}: `{field}` is not a predicate Reticle can evaluate: {e}; nothing was run and no verdict was made"),
            format!("fix `{field}` (the message lists what its kind accepts) and call again"),
        )
        .with("field", field)
        .with("at", e.at.clone())
        .with("accepts", e.accepted.clone())
    })
}

pub(super) async fn act_and_wait(call: &Call<'_>, a: ActAndWaitArgs) -> Result<Value, Refusal> {
    let session = call.session()?;
    let settle_wait = a.until.is_none();
    let predicate = match &a.until {
        Some(until) => predicate_of(call.tool.as_str(), "until", &until.0)?,
        None => Predicate::Settled {
            quiet_ms: SETTLE_QUIET_MS,
        },
    };
    let wait = bound(a.timeout_ms, DEFAULT_WAIT);
    let r = element_ref(call, session, a.element_ref, a.target).await?;
    let (action_id, since) = begin(call, session);
    let mut page = LivePage::new(call.ctx.bridge.clone(), Arc::clone(session), since);
    page.prepare(&predicate, wait).await;
    let acted = command(
        session,
        CommandName::Act,
        act_args(&r, a.action, a.args),
        COMMAND_BOUND,
    )
    .await;
    let (act_summary, early) = match acted {
        Outcome::Done(result) => (
            json!({
                "ref": r,
                "action": a.action.as_str(),
                "dispatched": result.get("dispatched").cloned().unwrap_or(json!(true)),
                "effect": result.get("effect").cloned().unwrap_or(Value::Null),
            }),
            None,
        ),
        Outcome::Refused(why) => return Err(refusal_for("act", Outcome::Refused(why))),
        Outcome::Lost(why) => (
            json!({ "ref": r, "action": a.action.as_str() }),
            Some(Evaluation::lost(
                predicate.kind(),
                format!("the page went away while the action ran ({why})"),
            )),
        ),
        Outcome::TimedOut(bound) => (
            json!({ "ref": r, "action": a.action.as_str() }),
            Some(Evaluation::unknown(
                predicate.kind(),
                format!(
                    "the page did not answer the action within {} ms, so whether it ran is unknown",
                    bound.as_millis()
                ),
            )),
        ),
    };
    let span = tracing::info_span!(span::PREDICATE_WAIT, ok = Empty, error = Empty);
    let (evaluation, window, waited_ms, timed_out) = match early {
        Some(evaluation) => {
            let window = crate::verdict::Observation::window(&mut page);
            (evaluation, window, 0, false)
        }
        None => {
            let waited = wait_until(&predicate, &mut page, wait)
                .instrument(span.clone())
                .await;
            (
                waited.evaluation,
                waited.window,
                waited.waited.as_millis() as u64,
                waited.timed_out,
            )
        }
    };
    if evaluation.observation_lost {
        span.record("ok", false);
        span.record("error", "the page went away during the wait");
    }
    let context = Context {
        losses: window.losses.clone(),
        settled: settle_wait.then_some(evaluation.status == crate::verdict::Status::Pass),
        presence_only: predicate.presence_only(),
    };
    let verdict = decide(evaluation, &context);
    let next = page.session().head();
    call.ctx
        .host
        .remember(session.id(), |m| m.end_action(&action_id, next));
    let mut answer = verdict_value(&verdict);
    answer["actionId"] = json!(action_id);
    answer["since"] = json!(since);
    answer["next"] = json!(next);
    answer["waitedMs"] = json!(waited_ms);
    answer["timedOut"] = json!(timed_out);
    answer["until"] = serde_json::to_value(&predicate).unwrap_or(Value::Null);
    answer["act"] = act_summary;
    answer["reaction"] = digest(&window);
    if verdict.verified != Verified::Yes {
        let capsule = json!({
            "tool": call.tool.as_str(),
            "sessionId": session.id(),
            "arguments": call.arguments,
            "verdict": &answer,
            "events": window.events.iter().rev().take(capsules::EVENTS_KEPT).collect::<Vec<_>>(),
        });
        match capsules::save(&call.ctx.host.workspace, &capsule) {
            Ok(name) => answer["capsuleSaved"] = json!(name),
            Err(why) => answer["capsuleError"] = json!(why),
        }
    }
    Ok(answer)
}
