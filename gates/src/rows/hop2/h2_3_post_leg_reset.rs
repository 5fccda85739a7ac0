//! H2.3: every POST reset while the stream stays up: the call is answered -32001
//! `post_failed`, the stream never drops, and the link serves again. Its scenario and judge.

use harness::OwnedDaemon;
use reticle::mcp::jsonrpc::LostPopulation;
use reticle::proxy::events as proxy_events;
use serde_json::json;
use toxics::ToxicSpec;
use toxics::toxic::ResetPeer;

use super::{Surfacing, judge_surfaced_then_recovered};
use crate::controls::StandIn;
use crate::fault;
use crate::history::{History, Op};
use crate::judge::Judgement;
use crate::rows::RowGate;
use crate::scenarios::agent::events;
use crate::scenarios::agent_kit;
use crate::scenarios::agent_kit::{
    judge_surfacing, mark_call_under_fault, record_served_again, warm_agent,
};
use crate::scenarios::kit::{judged, observe};
use crate::scenarios::proxied::ProxiedDaemon;
use crate::scenarios::{GateEnv, Ran};

/// H2.3: `reset_peer` upstream: every new connection is reset at its first byte, which leaves
/// the open SSE stream alone (it sends nothing upstream) and hits every POST. The call must be
/// answered -32001 `post_failed` saying the link is still up, the stream must never drop, and
/// once the toxic goes the very next call succeeds.
pub async fn post_leg_reset(env: &GateEnv) -> Ran {
    post_leg_reset_with(env, &[]).await
}

/// H2.3's scenario with `daemon_env` set on its (traced) daemon: the negative control of the
/// trace check under faults gives it the switch that breaks its trace.
pub async fn post_leg_reset_with(env: &GateEnv, daemon_env: &[(&str, &str)]) -> Ran {
    let history = History::new();
    let daemon = daemon_env
        .iter()
        .fold(OwnedDaemon::builder(), |builder, (key, value)| {
            builder.env(key, *value)
        });
    let (_state, link, options) = match ProxiedDaemon::start_for(
        env,
        &history,
        daemon,
        fault::RESET_PEER_UPSTREAM,
        judge_surfacing,
    )
    .await
    {
        Ok(opened) => opened,
        Err(ran) => return ran,
    };
    let agent = match warm_agent(
        &history,
        options.clone(),
        fault::RESET_PEER_UPSTREAM,
        judge_surfacing,
    )
    .await
    {
        Ok(agent) => agent,
        Err(ran) => return ran,
    };
    let outages_before = events(&options, proxy_events::CONNECTION_LOST).len();
    let injected = link
        .inject_refusing(
            &history,
            fault::RESET_PEER_UPSTREAM,
            ToxicSpec::new(ResetPeer { timeout: 0 }).upstream(),
        )
        .await;
    mark_call_under_fault(&history);
    let _ = agent.call("reticle_sessions", json!({})).await;
    link.heal(&history).await;
    let next = agent.call("reticle_sessions", json!({})).await;
    let outages = events(&options, proxy_events::CONNECTION_LOST).len() - outages_before;
    observe(&history, OUTAGES, json!({ "during": outages }));
    record_served_again(&history, injected && next.is_ok());
    agent.close().await;
    link.close(&history).await;
    judged(history, judge_post_leg_reset)
}

/// The observation of the link outages the proxy logged while the POST leg was reset:
/// `{"during"}`.
const OUTAGES: &str = "outages";

/// H2.3's judge, from the history alone: the marked call answered -32001 `post_failed` saying
/// the link is still up, belied by any outage the proxy logged meanwhile (observed), then the
/// link served again.
pub fn judge_post_leg_reset(ops: &[Op]) -> Judgement {
    let outages = agent_kit::last_observed(ops, OUTAGES)
        .and_then(|o| o.value["during"].as_u64())
        .unwrap_or(0);
    let post_failed =
        Surfacing::answered(LostPopulation::PostFailed, &["still up"])
            .belied_by((outages > 0).then(|| {
            format!(
                "the answer said the link was still up, but the proxy logged {outages} outage(s)"
            )
        }));
    judge_surfaced_then_recovered(ops, &post_failed)
}

/// H2.3 in the row table.
pub const H2_3: RowGate = RowGate {
    id: "H2.3",
    file: file!(),
    scenario: |env| Box::pin(post_leg_reset(env)),
    judge: judge_post_leg_reset,
    controls: &[StandIn::BrokenTraceUnderAFault],
};
