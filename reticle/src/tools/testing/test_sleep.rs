//! `reticle_test_sleep`, only when a test asks for it through `RETICLE_TEST_CATALOGUE`: a call
//! that takes a chosen time, to hold calls in flight while a fault is injected.

use std::time::Duration;

use serde_json::{Value, json};

use crate::tools::call::Call;
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::SleepArgs;
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, Tool};

/// Waits `ms` milliseconds, then answers how long it waited.
async fn sleep(_call: &Call<'_>, a: SleepArgs) -> Result<Value, Refusal> {
    tokio::time::sleep(Duration::from_millis(a.ms.min(600_000))).await;
    Ok(json!({ "sleptMs": a.ms }))
}

/// `reticle_test_sleep`, as the registry knows it.
pub struct TestSleep;

impl Tool for TestSleep {
    const NAME: ToolName = ToolName::TestSleep;
    const TITLE: &'static str = "Test sleep";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str = "Test only: wait `ms` milliseconds, then answer.";
    type Args = SleepArgs;

    fn run<'a>(call: &'a Call<'a>, a: SleepArgs) -> Answer<'a> {
        Box::pin(sleep(call, a))
    }
}
