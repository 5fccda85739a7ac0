//! Tools that exist only when a test asks for them through `RETICLE_TEST_CATALOGUE`: a call that
//! takes a chosen time (to hold calls in flight while a fault is injected) and an echo.

use std::time::Duration;

use serde_json::{Value, json};

use super::args::SleepArgs;
use super::call::Call;
use super::refusal::Refusal;

/// Waits `ms` milliseconds, then answers how long it waited.
pub(super) async fn sleep(_call: &Call<'_>, a: SleepArgs) -> Result<Value, Refusal> {
    tokio::time::sleep(Duration::from_millis(a.ms.min(600_000))).await;
    Ok(json!({ "sleptMs": a.ms }))
}

/// Answers with its arguments.
pub(super) fn echo(call: &Call<'_>) -> Result<Value, Refusal> {
    Ok(json!({ "echo": call.arguments }))
}
