//! What assert and wait_for share: waiting for a predicate over the window since `since` (else
//! the last act), and, while the agent records, handing a check to the recording as the
//! consequence of the step it follows. It must not decide a verdict.

use std::sync::Arc;
use std::time::Duration;

use tracing::Instrument;
use tracing::field::Empty;

use crate::bridge::Cursor;
use crate::tools::bounds::bound;
use crate::tools::call::Call;
use crate::tools::commands::LivePage;
use crate::tools::judging::{predicate_of, window_start};
use crate::tools::recording;
use crate::tools::recording::TakenCheck;
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::WaitArgs;
use crate::verdict::wait_until;
use crate::wire::trace::span;

pub(super) async fn waited(
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

/// While the agent records, a check it made becomes the consequence of the step it follows.
pub(super) fn attach_to_recording(
    call: &Call<'_>,
    a: &WaitArgs,
    held: bool,
) -> Result<(), Refusal> {
    let check = TakenCheck {
        predicate: &a.predicate.0,
        timeout_ms: a.timeout_ms,
        held,
    };
    recording::attach_check(call, call.session()?, check);
    Ok(())
}
