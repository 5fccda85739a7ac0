//! `reticle_assert`: a verdict over the window since the last act (or `since`), optionally
//! waiting: yes only on positive evidence, no on an observed contradiction, unknown otherwise.

use std::time::Duration;

use serde_json::{Value, json};

use super::waiting::{attach_to_recording, waited};
use crate::tools::call::Call;
use crate::tools::judging::{digest, verdict_value};
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::WaitArgs;
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, SessionUse, Tool};
use crate::verdict::decide;
use crate::verdict::decide::Context;

async fn assert(call: &Call<'_>, a: WaitArgs) -> Result<Value, Refusal> {
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

/// `reticle_assert`, as the registry knows it.
pub struct Assert;

impl Tool for Assert {
    const NAME: ToolName = ToolName::Assert;
    const TITLE: &'static str = "Judge a claim";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str = "Judge a predicate over the window since the last act (or `since`): yes on positive evidence; no when a whole window contradicts it or lacks what it expects; unknown when the window is not whole.";
    const OUTPUT: &'static [&'static str] = &[
        "verified",
        "reason",
        "because",
        "evidence",
        "advice",
        "lost",
        "reaction",
        "since",
        "next",
        "capsuleSaved",
    ];
    const SESSION: SessionUse = SessionUse::Bound;
    type Args = WaitArgs;

    fn run<'a>(call: &'a Call<'a>, a: WaitArgs) -> Answer<'a> {
        Box::pin(assert(call, a))
    }
}
