//! H2.1: the SSE stream reset mid-call: the call is answered -32001 `in_flight_lost` at once,
//! and the link serves again once the fault goes. Its scenario and judge.

use std::sync::Arc;

use harness::{OwnedDaemon, poll};
use reticle::mcp::jsonrpc::LostPopulation;
use serde_json::json;
use toxics::ToxicSpec;
use toxics::toxic::ResetPeer;

use super::{Surfacing, heal_and_serve, judge_surfaced_then_recovered};
use crate::fault;
use crate::history::{History, Op};
use crate::judge::Judgement;
use crate::rows::RowGate;
use crate::scenarios::agent_kit::{judge_surfacing, mark_call_under_fault, warm_agent};
use crate::scenarios::kit::{BOUND, judged};
use crate::scenarios::proxied::ProxiedDaemon;
use crate::scenarios::{GateEnv, Ran};

/// H2.1: `reset_peer` downstream while a 120 s call runs at the daemon: the SSE stream is reset
/// (at its next keep-alive), and the call must be answered -32001 `in_flight_lost` at once,
/// saying the link dropped and that it may or may not have run, well inside the 60 s queue wait;
/// once the toxic goes, the next call succeeds.
pub async fn stream_reset_mid_call(env: &GateEnv) -> Ran {
    let history = History::new();
    let daemon =
        OwnedDaemon::builder().env(reticle::config::env::TEST_CATALOGUE, "+reticle_test_sleep");
    let (_state, link, options) = match ProxiedDaemon::start_for(
        env,
        &history,
        daemon,
        fault::RESET_PEER_DOWNSTREAM,
        judge_surfacing,
    )
    .await
    {
        Ok(opened) => opened,
        Err(ran) => return ran,
    };
    let options = options.env(reticle::config::env::QUEUE_WAIT_MS, "60000");
    let agent = match warm_agent(
        &history,
        options,
        fault::RESET_PEER_DOWNSTREAM,
        judge_surfacing,
    )
    .await
    {
        Ok(agent) => Arc::new(agent),
        Err(ran) => return ran,
    };
    mark_call_under_fault(&history);
    let caller = agent.clone();
    let slow = tokio::spawn(async move {
        caller
            .call_within("reticle_test_sleep", json!({ "ms": 120_000 }), BOUND)
            .await
    });
    let running = poll::within(BOUND, async || {
        let status = link.daemon.status().await?;
        (status.calls_in_flight == 1).then_some(())
    })
    .await
    .is_some();
    let injected = running
        && link
            .inject_refusing(
                &history,
                fault::RESET_PEER_DOWNSTREAM,
                ToxicSpec::new(ResetPeer { timeout: 0 }),
            )
            .await;
    if !running {
        history.fault(
            fault::RESET_PEER_DOWNSTREAM,
            false,
            json!({ "reason": "the slow call never ran at the daemon" }),
        );
    }
    let _ = slow.await;
    heal_and_serve(&link, &history, &agent, injected).await;
    if let Ok(agent) = Arc::try_unwrap(agent) {
        agent.close().await;
    }
    link.close(&history).await;
    judged(history, judge_stream_reset)
}

/// H2.1's judge, from the history alone: the marked call answered -32001 `in_flight_lost`
/// saying the link dropped and that it may or may not have run, then the link served again.
pub fn judge_stream_reset(ops: &[Op]) -> Judgement {
    let in_flight_lost = Surfacing::answered(
        LostPopulation::InFlightLost,
        &["dropped", "may or may not have run"],
    );
    judge_surfaced_then_recovered(ops, &in_flight_lost)
}

/// H2.1 in the row table.
pub const H2_1: RowGate = RowGate {
    id: "H2.1",
    file: file!(),
    scenario: |env| Box::pin(stream_reset_mid_call(env)),
    judge: judge_stream_reset,
    controls: &[],
};
