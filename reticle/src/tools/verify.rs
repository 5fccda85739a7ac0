//! Checking the page: `reticle_assert` (a verdict over the window since the last act, or
//! `since`, optionally waiting) and `reticle_wait_for` (block until a predicate holds; no
//! verdict). Also the pieces every verdict-producing tool shares: how a verdict is written out
//! and the digest of what the app did in a window. While the agent records, a check it made is
//! handed to [`super::recording`] as the consequence of the step it follows.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tracing::Instrument;
use tracing::field::Empty;

use super::act::predicate_of;
use super::args::WaitArgs;
use super::chokepoint::{Call, bound};
use super::page::LivePage;
use super::recording::{self, TakenCheck};
use super::refusal::Refusal;
use crate::bridge::{Cursor, Session};
use crate::verdict::decide::Context;
use crate::verdict::{Verdict, Window, decide, wait_until};
use crate::wire::trace::span;
use crate::wire::{EventFamily, KnownEventType as K};

/// How long wait_for waits by default.
pub const DEFAULT_WAIT_FOR: Duration = Duration::from_millis(4000);

/// Reads a `since` cursor argument.
pub(super) fn cursor_arg(tool: &str, field: &str, text: &str) -> Result<Cursor, Refusal> {
    text.parse::<Cursor>().map_err(|problem| {
        Refusal::bad_arguments(
            tool,
            &format!("field `{field}`: {problem}; pass the `since` or `next` a tool returned"),
        )
    })
}

/// Where a check's window starts: `since`, else the last act on this page, else its start.
pub(super) fn window_start(
    call: &Call<'_>,
    session: &Session,
    since: Option<&str>,
) -> Result<Cursor, Refusal> {
    match since {
        Some(text) => cursor_arg(call.tool.as_str(), "since", text),
        None => Ok(call
            .ctx
            .host
            .remember(session.id(), |m| m.last_act)
            .unwrap_or(Cursor {
                life: session.life(),
                seq: 0,
            })),
    }
}

/// A verdict as tools return it.
pub(super) fn verdict_value(verdict: &Verdict) -> Value {
    let mut value = json!({
        "ok": true,
        "verified": verdict.verified,
        "reason": verdict.reason,
        "because": verdict.because,
        "evidence": verdict.evidence,
    });
    if !verdict.lost.is_empty() {
        value["lost"] = json!(verdict.lost);
    }
    if let Some(advice) = &verdict.advice {
        value["advice"] = json!(advice);
    }
    value
}

/// Counts of what the app did in a window.
pub(super) fn digest(window: &Window) -> Value {
    let mut by_type: BTreeMap<&str, u64> = BTreeMap::new();
    let mut signals: Vec<&str> = Vec::new();
    let (mut net, mut failed, mut dom, mut console_errors) = (0, 0, 0u64, 0);
    let mut route = None;
    for e in &window.events {
        *by_type.entry(e.kind.as_str()).or_default() += 1;
        match e.kind.known() {
            Some(K::NetRequest) => {
                net += 1;
                let ok = e.data.get("ok").and_then(Value::as_bool).unwrap_or(true);
                if !ok {
                    failed += 1;
                }
            }
            Some(K::Signal) => {
                if let Some(name) = e.data.get("name").and_then(Value::as_str)
                    && !signals.contains(&name)
                    && signals.len() < 20
                {
                    signals.push(name);
                }
            }
            Some(K::ConsoleError | K::ErrorUncaught) => console_errors += 1,
            Some(K::RouteChange) => route = e.data.get("to").cloned(),
            _ if e.kind.in_family(EventFamily::Dom) => {
                dom += e.data.get("count").and_then(Value::as_u64).unwrap_or(1);
            }
            _ => {}
        }
    }
    let mut value = json!({
        "events": window.events.len(),
        "net": { "total": net, "failed": failed },
        "consoleErrors": console_errors,
        "signals": signals,
        "domChanges": dom,
        "byType": by_type,
    });
    if let Some(route) = route {
        value["route"] = route;
    }
    value
}

async fn waited(
    call: &Call<'_>,
    a: &WaitArgs,
    default_wait: Duration,
) -> Result<
    (
        crate::verdict::predicate::Predicate,
        crate::verdict::Waited,
        Cursor,
        Cursor,
    ),
    Refusal,
> {
    let session = call.session()?;
    let predicate = predicate_of(call.tool.as_str(), "predicate", &a.predicate.0)?;
    let since = window_start(call, session, a.since.as_deref())?;
    let mut page = LivePage::new(call.ctx.bridge.clone(), Arc::clone(session), since);
    let wait = bound(a.timeout_ms, default_wait);
    page.prepare(&predicate, wait).await;
    let span = tracing::info_span!(span::PREDICATE_WAIT, ok = Empty, error = Empty);
    let result = wait_until(&predicate, &mut page, wait)
        .instrument(span.clone())
        .await;
    if result.evaluation.observation_lost {
        span.record("ok", false);
        span.record("error", "the page went away during the wait");
    }
    let next = page.session().head();
    Ok((predicate, result, since, next))
}

pub(super) async fn assert(call: &Call<'_>, a: WaitArgs) -> Result<Value, Refusal> {
    let (predicate, result, since, next) = waited(call, &a, Duration::ZERO).await?;
    let context = Context {
        losses: result.window.losses.clone(),
        settled: None,
        presence_only: predicate.presence_only(),
    };
    let verdict = decide(result.evaluation.clone(), &context);
    attach_to_recording(call, &a, verdict.verified == crate::verdict::Verified::Yes)?;
    let mut answer = verdict_value(&verdict);
    answer["since"] = json!(since);
    answer["next"] = json!(next);
    answer["waitedMs"] = json!(result.waited.as_millis() as u64);
    answer["timedOut"] = json!(result.timed_out);
    answer["reaction"] = digest(&result.window);
    Ok(answer)
}

pub(super) async fn wait_for(call: &Call<'_>, a: WaitArgs) -> Result<Value, Refusal> {
    let (_, result, since, next) = waited(call, &a, DEFAULT_WAIT_FOR).await?;
    let held = result.evaluation.status == crate::verdict::Status::Pass;
    attach_to_recording(call, &a, held)?;
    let mut answer = json!({
        "ok": true,
        "status": result.evaluation.status,
        "evaluation": result.evaluation,
        "waitedMs": result.waited.as_millis() as u64,
        "timedOut": result.timed_out,
        "since": since,
        "next": next,
        "note": "wait_for makes no verdict; reticle_assert or reticle_act_and_wait do",
    });
    if !result.window.losses.is_empty() {
        answer["lost"] = json!(result.window.losses);
    }
    Ok(answer)
}

/// While the agent records, a check it made becomes the consequence of the step it follows.
fn attach_to_recording(call: &Call<'_>, a: &WaitArgs, held: bool) -> Result<(), Refusal> {
    let check = TakenCheck {
        predicate: &a.predicate.0,
        timeout_ms: a.timeout_ms,
        held,
    };
    recording::attach_check(call, call.session()?, check);
    Ok(())
}
