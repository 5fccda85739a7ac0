//! Checking the page: `reticle_assert` (a verdict over the window since the last act, or
//! `since`, optionally waiting) and `reticle_wait_for` (block until a predicate holds; no
//! verdict). While the agent records, a check it made is handed to [`super::recording`] as the
//! consequence of the step it follows.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tracing::Instrument;
use tracing::field::Empty;

use super::args::WaitArgs;
use super::bounds::bound;
use super::call::Call;
use super::judging::{digest, predicate_of, verdict_value, window_start};
use super::page::LivePage;
use super::recording::{self, TakenCheck};
use super::refusal::Refusal;
use crate::bridge::Cursor;
use crate::verdict::decide::Context;
use crate::verdict::{decide, wait_until};
use crate::wire::trace::span;

/// How long wait_for waits by default.
pub const DEFAULT_WAIT_FOR: Duration = Duration::from_millis(4000);

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
