//! `reticle_wait_for`: block until a predicate holds or the timeout passes; it answers the
//! evaluation, never a verdict.

use std::time::Duration;

use serde_json::{Value, json};

use super::waiting::{attach_to_recording, waited};
use crate::tools::call::Call;
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::WaitArgs;
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, SessionUse, Tool};

/// How long wait_for waits by default.
pub const DEFAULT_WAIT_FOR: Duration = Duration::from_millis(4000);

async fn wait_for(call: &Call<'_>, a: WaitArgs) -> Result<Value, Refusal> {
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

/// `reticle_wait_for`, as the registry knows it.
pub struct WaitFor;

impl Tool for WaitFor {
    const NAME: ToolName = ToolName::WaitFor;
    const TITLE: &'static str = "Wait for a claim";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str = "Block until a predicate holds or the timeout passes; returns the evaluation, not a verdict.";
    const OUTPUT: &'static [&'static str] = &["status", "evaluation", "waitedMs", "timedOut"];
    const SESSION: SessionUse = SessionUse::Bound;
    type Args = WaitArgs;

    fn run<'a>(call: &'a Call<'a>, a: WaitArgs) -> Answer<'a> {
        Box::pin(wait_for(call, a))
    }
}
