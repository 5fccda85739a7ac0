//! The resolve-act-judge core: the one path from an element and an action to a verdict
//! ([`resolve_act_judge`]), shared by `reticle_act_and_wait` and every replayed flow step, and
//! the pieces the act tools share (resolving a target afresh to one ref, the act's arguments,
//! the action window). It must not answer a tool itself.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tracing::Instrument;
use tracing::field::Empty;

use super::call::Call;
use super::commands::{COMMAND_BOUND, LivePage, Outcome, ask, command, refusal_for};
use super::judging::{digest, verdict_value};
use super::name_match::hold_to_name;
use super::recording::TakenAct;
use super::refusal::Refusal;
use super::surface::args::{Action, ActionArgs, Target};
use super::surface::names::ToolName;
use super::{capsules, recording};
use crate::bridge::{Cursor, Session};
use crate::verdict::decide::Context;
use crate::verdict::predicate::Predicate;
use crate::verdict::{Evaluation, ObservedEvent, Verdict, Window, decide, wait_until};
use crate::wire::CommandName;
use crate::wire::args::ActSettle;
use crate::wire::trace::span;

/// What act and act_sequence say about themselves.
pub const PROVES_NOTHING: &str = "this only dispatched the action; it proves nothing about the app: check the outcome with reticle_assert (since this cursor) or use reticle_act_and_wait";

/// How long act_and_wait waits by default.
pub const DEFAULT_WAIT: Duration = Duration::from_millis(4000);

/// How quiet the page must be to count as settled when no `until` is given.
pub const SETTLE_QUIET_MS: u64 = 500;

/// Why an action's element could not be resolved to exactly one.
pub(super) enum Unresolved {
    /// No element matches the target.
    Missing(Refusal),
    /// Several elements match; the refusal lists them as `candidates`.
    Ambiguous(Refusal),
    /// The arguments name no element, or the page would not answer.
    Refused(Refusal),
}

impl From<Unresolved> for Refusal {
    fn from(unresolved: Unresolved) -> Self {
        match unresolved {
            Unresolved::Missing(r) | Unresolved::Ambiguous(r) | Unresolved::Refused(r) => r,
        }
    }
}

/// The ref an action is for: given, or the one element a target matches (resolved afresh on
/// every call: a target is never remembered as a ref).
pub(super) async fn element_ref(
    tool: ToolName,
    session: &Session,
    given: Option<String>,
    target: Option<Target>,
) -> Result<String, Unresolved> {
    match (given, target) {
        (Some(r), None) => Ok(r),
        (None, Some(t)) => {
            let criteria = t.criteria();
            if criteria.keys().all(|k| k == "exact") {
                return Err(Unresolved::Refused(Refusal::bad_arguments(
                    tool.as_str(),
                    "field `target`: give testid, role (and name), text, label, placeholder, alt or css",
                )));
            }
            let mut args = criteria.clone();
            args.insert("limit".into(), json!(5));
            let found = ask(session, CommandName::Query, Value::Object(args))
                .await
                .map_err(Unresolved::Refused)?;
            // Protocol 1 answers `query` with `{elements, hint?}`: the matches are the elements
            // listed (the published 2.0.0 SDK sends no `count`; ours adds one, counting past the
            // limit, which only makes an ambiguity message more precise).
            let mut elements = found.get("elements").cloned().unwrap_or(json!([]));
            let held = hold_to_name(
                &mut elements,
                t.name.as_deref().filter(|_| t.exact != Some(false)),
            );
            let listed = elements.as_array().map_or(0, Vec::len) as u64;
            let count = found
                .get("count")
                .and_then(Value::as_u64)
                .filter(|_| !held)
                .map_or(listed, |c| c.max(listed));
            match count {
                1 => elements[0]
                    .get("ref")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .ok_or_else(|| Unresolved::Refused(Refusal::new("the page answered a match without a ref", "retry"))),
                0 => Err(Unresolved::Missing(Refusal::new(
                    format!("no element matches the target {}; nothing was done", Value::Object(criteria)),
                    "look at the page with reticle_snapshot or reticle_query and name an element that is there",
                )
                .with("hint", found.get("hint").cloned().unwrap_or(Value::Null)))),
                n => Err(Unresolved::Ambiguous(Refusal::new(
                    format!("{n} elements match the target {}; an action needs exactly one, so nothing was done", Value::Object(criteria)),
                    "narrow the target (add name or testid) or pass the ref of the one you mean",
                )
                .with("candidates", elements))),
            }
        }
        _ => Err(Unresolved::Refused(Refusal::bad_arguments(
            tool.as_str(),
            "give exactly one of `ref` and `target`",
        ))),
    }
}

/// The `act` command's arguments; `settle` is [`ActSettle::Task`] when the daemon observes
/// the consequence itself (a judged act), so the page answers after one task, not a quiet spell.
pub(super) fn act_args(
    element_ref: &str,
    action: Action,
    args: Option<ActionArgs>,
    settle: ActSettle,
) -> Value {
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
    let mut command = json!({ "ref": element_ref, "action": action.as_str(), "args": map });
    if settle != ActSettle::Quiet {
        command["settle"] = json!(settle.as_str());
    }
    command
}

/// How an act reached the page: DevTools input on a driven tab, or the SDK's synthetic events,
/// and why not real when it was not.
pub(super) struct InputMode {
    real: bool,
    reason: Option<String>,
}

impl InputMode {
    /// Writes `inputMode` (and `inputModeReason`) into an act's answer.
    pub(super) fn stamp(&self, answer: &mut Value) {
        answer["inputMode"] = json!(if self.real { "real" } else { "synthetic" });
        if let Some(reason) = &self.reason {
            answer["inputModeReason"] = json!(reason);
        }
    }
}

/// Runs one act: with real input when the session is a tab Reticle drives and the action has a
/// real form, else the SDK's `act` command (settling as `settle` says, answering within `bound`).
pub(super) async fn dispatch(
    call: &Call<'_>,
    session: &Session,
    element_ref: &str,
    action: Action,
    args: Option<ActionArgs>,
    settle: ActSettle,
    bound: Duration,
) -> (Outcome, InputMode) {
    let drives = &call.ctx.host.drives;
    match super::real_input::act(drives, session, element_ref, action, args.as_ref()).await {
        Ok(outcome) => (
            outcome,
            InputMode {
                real: true,
                reason: None,
            },
        ),
        Err(why) => {
            let outcome = command(
                session,
                CommandName::Act,
                act_args(element_ref, action, args, settle),
                bound,
            )
            .await;
            (
                outcome,
                InputMode {
                    real: false,
                    reason: Some(why),
                },
            )
        }
    }
}

/// An act the page took, as a recording keeps it.
pub(super) fn taken(action: Action, args: Option<ActionArgs>, until: Option<Value>) -> TakenAct {
    TakenAct {
        action,
        args,
        timeout_ms: None,
        until,
    }
}

/// Opens an action window at the page's head; returns (actionId, since).
pub(super) fn begin(call: &Call<'_>, session: &Session) -> (String, Cursor) {
    let since = session.head();
    let id = call.ctx.host.remember(session.id(), |m| {
        if let Some((previous, _)) = m.actions.last().cloned() {
            m.end_action(&previous, since);
        }
        m.begin_action(since)
    });
    (id, since)
}

/// One act to judge: the element (a ref or a target resolved afresh), the action, and the
/// consequence that must follow it within `wait`.
pub(super) struct JudgedAct {
    pub element_ref: Option<String>,
    pub target: Option<Target>,
    pub action: Action,
    pub args: Option<ActionArgs>,
    /// The consequence; `None` waits for the page to settle.
    pub until: Option<Predicate>,
    pub wait: Duration,
}

/// What a judged act came to: the verdict, the answer act_and_wait gives for it, and the
/// window the verdict was decided over.
pub(super) struct Judged {
    pub verdict: Verdict,
    pub answer: Value,
    pub window: Window,
}

/// Why an act produced no verdict.
pub(super) enum Unjudged {
    /// Its element could not be resolved to exactly one: nothing was done.
    Unresolved(Unresolved),
    /// The page refused the action (a destructive one without `confirmDangerous`, a disabled
    /// element...): nothing was done.
    ActRefused(Refusal),
}

impl From<Unjudged> for Refusal {
    fn from(unjudged: Unjudged) -> Self {
        match unjudged {
            Unjudged::Unresolved(u) => u.into(),
            Unjudged::ActRefused(r) => r,
        }
    }
}

/// Resolve, act, judge: the one path from an element and an action to a verdict, shared by
/// `reticle_act_and_wait` and every flow replay step.
pub(super) async fn resolve_act_judge(
    call: &Call<'_>,
    session: &Arc<Session>,
    job: JudgedAct,
) -> Result<Judged, Unjudged> {
    let settle_wait = job.until.is_none();
    let predicate = job.until.unwrap_or(Predicate::Settled {
        quiet_ms: SETTLE_QUIET_MS,
    });
    let r = element_ref(call.tool, session, job.element_ref, job.target.clone())
        .await
        .map_err(Unjudged::Unresolved)?;
    let whereabouts = recording::locate_for_recording(call, session, job.target.as_ref(), &r).await;
    let (action_id, since) = begin(call, session);
    let mut page = LivePage::new(call.ctx.bridge.clone(), Arc::clone(session), since);
    page.prepare(&predicate, job.wait).await;
    let (acted, input) = dispatch(
        call,
        session,
        &r,
        job.action,
        job.args.clone(),
        ActSettle::Task,
        COMMAND_BOUND,
    )
    .await;
    let (mut act_summary, early) = match acted {
        Outcome::Done(result) => {
            // The `until` as the agent wrote it (a recording keeps it, never the parsed form).
            let mut act = taken(job.action, job.args, call.arguments.get("until").cloned());
            act.timeout_ms = call.arguments.get("timeout_ms").and_then(Value::as_u64);
            recording::capture(call, session, whereabouts, act);
            (
                json!({
                    "ref": r,
                    "action": job.action.as_str(),
                    "dispatched": result.get("dispatched").cloned().unwrap_or(json!(true)),
                    "effect": result.get("effect").cloned().unwrap_or(Value::Null),
                }),
                None,
            )
        }
        Outcome::Refused(why) => {
            return Err(Unjudged::ActRefused(refusal_for(
                "act",
                Outcome::Refused(why),
            )));
        }
        Outcome::Lost(why) => (
            json!({ "ref": r, "action": job.action.as_str() }),
            Some(Evaluation::lost(
                predicate.kind(),
                format!("the page went away while the action ran ({why})"),
            )),
        ),
        Outcome::TimedOut(bound) => (
            json!({ "ref": r, "action": job.action.as_str() }),
            Some(Evaluation::unknown(
                predicate.kind(),
                format!(
                    "the page did not answer the action within {} ms, so whether it ran is unknown",
                    bound.as_millis()
                ),
            )),
        ),
    };
    input.stamp(&mut act_summary);
    let span = tracing::info_span!(span::PREDICATE_WAIT, ok = Empty, error = Empty);
    let (evaluation, window, waited_ms, timed_out) = match early {
        Some(evaluation) => {
            let window = crate::verdict::Observation::window(&mut page);
            (evaluation, window, 0, false)
        }
        None => {
            let waited = wait_until(&predicate, &mut page, job.wait)
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
    if let Some(mocked) =
        super::driven::mocked_traffic(&call.ctx.host.drives, session.id(), &window).await
    {
        answer["mocked"] = mocked;
    }
    Ok(Judged {
        verdict,
        answer,
        window,
    })
}

/// The most recent events of a window, as a capsule keeps them.
pub(super) fn capsule_events(window: &Window) -> Vec<&ObservedEvent> {
    window
        .events
        .iter()
        .rev()
        .take(capsules::EVENTS_KEPT)
        .collect()
}
