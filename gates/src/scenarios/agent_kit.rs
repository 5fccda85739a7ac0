//! What the hop 1 to 3 scenarios share: the warm agent opening ([`warm_agent`]), whether the
//! link [`serves`], the survival and surfacing judges ([`judge_survival`], [`judge_surfacing`],
//! [`judge_survival_then`]) and their preconditions ([`answered_once_after_fault`]), and what a
//! judge reads from the history instead of the scenario: the call under the fault
//! ([`call_under_fault`]), whether the link served again ([`served_again`]), the harness's last
//! observation ([`last_observed`]). Judges are named `judge_<what they judge>`.

use harness::ProxyOptions;
use serde_json::json;

use super::Ran;
use super::agent::Agent;
use super::kit::{BOUND, observe, unestablished};
use crate::history::{Actor, History, Op, OpType};
use crate::judge::{self, Judgement, RowOutcome};

/// The preconditions of a hop 1 to 3 judge: every call answered exactly once, and the fault
/// established; else the silent (a hang) or inconclusive judgement they force.
pub fn answered_once_after_fault(ops: &[Op]) -> Result<(), Judgement> {
    judge::exactly_once(ops)?;
    judge::established_fault(ops)?;
    Ok(())
}

/// The survival judge of hops 1 to 3: every call answered exactly once, the fault established,
/// every `tools/call` after it a success.
pub fn judge_survival(ops: &[Op]) -> Judgement {
    if let Err(hang) = judge::exactly_once(ops) {
        return hang;
    }
    judge::must_survive(ops, "tools/call")
}

/// [`judge_survival`], and on a survived history the row's own conditions: `further` gets the
/// survival evidence and gives the judgement.
pub fn judge_survival_then(ops: &[Op], further: impl FnOnce(&str) -> Judgement) -> Judgement {
    let verdict = judge_survival(ops);
    if verdict.outcome != RowOutcome::Survived {
        return verdict;
    }
    further(&verdict.evidence)
}

/// The surfacing judge of hops 1 and 2 when a scenario could not get as far as its call: every
/// call answered exactly once, the fault established, a `tools/call` after it failing.
pub fn judge_surfacing(ops: &[Op]) -> Judgement {
    if let Err(hang) = judge::exactly_once(ops) {
        return hang;
    }
    judge::must_surface(ops, "tools/call", &[])
}

/// The opening of the hop 1 to 3 scenarios that need an agent attached and served: starts
/// `reticle mcp` as a real MCP client and calls `reticle_sessions` until one is served. When
/// either fails, the scenario is over: the fault it was about to inject is recorded
/// unestablished, and the history judged by `judge` comes back instead of the agent.
pub async fn warm_agent(
    history: &History,
    options: ProxyOptions,
    fault: &str,
    judge: fn(&[Op]) -> Judgement,
) -> Result<Agent, Ran> {
    let agent = match Agent::start(history, options).await {
        Ok(agent) => agent,
        Err(why) => return Err(unestablished(history.clone(), fault, &why, judge)),
    };
    if !serves(&agent).await {
        agent.close().await;
        return Err(unestablished(
            history.clone(),
            fault,
            "the link never served a call before the fault",
            judge,
        ));
    }
    Ok(agent)
}

/// Whether the link serves `agent` a call: `reticle_sessions` tried until it succeeds, within
/// the bound.
pub async fn serves(agent: &Agent) -> bool {
    agent
        .call_until_ok("reticle_sessions", json!({}), BOUND)
        .await
        .is_some()
}

/// The first client invoke of `f` recorded at or after position `mark`.
fn first_invoke_after<'a>(ops: &'a [Op], mark: usize, f: &str) -> Option<&'a Op> {
    ops.iter().find(|o| {
        o.index >= mark && o.actor == Actor::Client && o.op_type == OpType::Invoke && o.f == f
    })
}

/// The harness's mark just before the call a row judges (`{}`): where the judge looks for it,
/// so the position is in the history rather than kept by the scenario.
pub const CALL_UNDER_FAULT: &str = "call_under_fault";

/// Marks the next call as the one the row judges ([`CALL_UNDER_FAULT`]).
pub fn mark_call_under_fault(history: &History) {
    observe(history, CALL_UNDER_FAULT, json!({}));
}

/// The first client invoke of `f` after the last [`CALL_UNDER_FAULT`] mark: `None` when the
/// scenario never marked one (it stopped before its call), `Some(None)` when it marked one and
/// made no such call.
pub fn call_under_fault<'a>(ops: &'a [Op], f: &str) -> Option<Option<&'a Op>> {
    let mark = last_observed(ops, CALL_UNDER_FAULT)?;
    Some(first_invoke_after(ops, mark.index, f))
}

/// The harness observation of whether the link served a call again once its fault went:
/// `{"served"}`.
pub const SERVED_AGAIN: &str = "served_again";

/// Records whether the link served again ([`SERVED_AGAIN`]); returns it.
pub fn record_served_again(history: &History, served: bool) -> bool {
    observe(history, SERVED_AGAIN, json!({ "served": served }));
    served
}

/// Whether the history records the link served again once its fault went ([`SERVED_AGAIN`]).
pub fn served_again(ops: &[Op]) -> bool {
    last_observed(ops, SERVED_AGAIN).is_some_and(|o| o.value["served"] == true)
}

/// The harness's last observation `f`.
pub fn last_observed<'a>(ops: &'a [Op], f: &str) -> Option<&'a Op> {
    ops.iter().rfind(|o| o.actor == Actor::Harness && o.f == f)
}
