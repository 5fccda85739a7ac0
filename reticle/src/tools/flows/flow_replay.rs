//! `reticle_flow_replay`: replay one saved flow through [`super::player`] and answer its verdict,
//! with the failing step, its evidence, a capsule when it is not yes, and a run artifact.

use serde_json::{Value, json};

use super::player::*;
use crate::flow::runs::{Run, RunKind, RunVerdict};
use crate::tools::arrival::ARRIVAL_BOUND;
use crate::tools::bounds::bound;
use crate::tools::call::Call;
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::FlowReplayArgs;
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, SessionUse, Tool};
use crate::verdict::Verified;

async fn flow_replay(call: &Call<'_>, a: FlowReplayArgs) -> Result<Value, Refusal> {
    let session = call.session()?;
    let workspace = call.ctx.workspace();
    let (flow, steps) = flow_to_run(call, &a.name, a.secrets, a.confirm_dangerous)?;
    let run = Run::begin(RunKind::FlowReplay);
    let approach = Approach {
        bound: bound(a.arrival_timeout_ms, ARRIVAL_BOUND),
        fresh_at_start: a.fresh_at_start == Some(true),
    };
    let replayed = replay(call, session, &flow, steps, approach).await;
    let mut answer = replayed.record.clone();
    answer["ok"] = json!(true);
    if replayed.verified != Verified::Yes {
        leave_capsule(call, session, &replayed, &mut answer);
    }
    let because = replayed.record["because"].as_str().unwrap_or("");
    run.save_into(
        workspace,
        &RunVerdict {
            verified: replayed.verified,
            because,
            flows: std::slice::from_ref(&replayed.record),
        },
        &mut answer,
    );
    Ok(answer)
}

/// `reticle_flow_replay`, as the registry knows it.
pub struct FlowReplay;

impl Tool for FlowReplay {
    const NAME: ToolName = ToolName::FlowReplay;
    const TITLE: &'static str = "Replay a flow";
    const EFFECT: Effect = Effect::Changes;
    const DESCRIPTION: &'static str = "Replay a saved flow: go to its start path, run each step on its target resolved afresh, check each consequence as reticle_act_and_wait does, and answer one verdict (yes, no or unknown) with the failing step, its evidence, a capsule and a run artifact. An assertion-free flow never answers yes.";
    const OUTPUT: &'static [&'static str] = &[
        "verified",
        "reason",
        "because",
        "failingStep",
        "failure",
        "steps",
        "grade",
        "runId",
        "capsuleSaved",
    ];
    const SESSION: SessionUse = SessionUse::Bound;
    const DRIVES_SESSION: bool = true;
    type Args = FlowReplayArgs;

    fn run<'a>(call: &'a Call<'a>, a: FlowReplayArgs) -> Answer<'a> {
        Box::pin(flow_replay(call, a))
    }
}
