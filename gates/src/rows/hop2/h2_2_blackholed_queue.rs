//! H2.2: the daemon blackholed: a call queued while no session opens is answered -32001
//! `never_sent` at the queue bound, and the link serves again. Its scenario and judge.

use harness::OwnedDaemon;
use reticle::mcp::jsonrpc::LostPopulation;
use serde_json::json;
use toxics::ToxicSpec;
use toxics::toxic::Timeout;

use super::{Surfacing, heal_and_serve, judge_surfaced_then_recovered};
use crate::fault;
use crate::history::{History, Op};
use crate::judge::Judgement;
use crate::rows::RowGate;
use crate::scenarios::agent::Agent;
use crate::scenarios::agent_kit::{judge_surfacing, mark_call_under_fault};
use crate::scenarios::kit::{judged, observe};
use crate::scenarios::proxied::ProxiedDaemon;
use crate::scenarios::{GateEnv, Ran};

/// H2.2: the daemon blackholed (`timeout` 0 downstream on the fault proxy: connections are
/// accepted and nothing ever comes back). A call queued while no session can open is never
/// sent, and must be answered -32001 `never_sent` saying it did not run (at the queue bound at
/// the latest: 3 s here); once the blackhole goes, the same proxy serves the call.
pub async fn blackholed_daemon_queue(env: &GateEnv) -> Ran {
    let history = History::new();
    let (_state, link, options) = match ProxiedDaemon::start_for(
        env,
        &history,
        OwnedDaemon::builder(),
        fault::BLACKHOLE_DAEMON,
        judge_surfacing,
    )
    .await
    {
        Ok(opened) => opened,
        Err(ran) => return ran,
    };
    let options = options.env(reticle::config::env::QUEUE_WAIT_MS, "3000");
    let injected = link
        .inject_refusing(
            &history,
            fault::BLACKHOLE_DAEMON,
            ToxicSpec::new(Timeout { timeout: 0 }),
        )
        .await;
    let agent = match Agent::start(&history, options).await {
        Ok(agent) => agent,
        Err(why) => {
            observe(&history, "initialize_failed", json!({ "reason": why }));
            return judged(history, judge_surfacing);
        }
    };
    mark_call_under_fault(&history);
    let _ = agent.call("reticle_sessions", json!({})).await;
    heal_and_serve(&link, &history, &agent, injected).await;
    agent.close().await;
    link.close(&history).await;
    judged(history, judge_blackholed_queue)
}

/// H2.2's judge, from the history alone: the marked call answered -32001 `never_sent` saying it
/// did not run, then the link served again.
pub fn judge_blackholed_queue(ops: &[Op]) -> Judgement {
    let never_sent = Surfacing::answered(LostPopulation::NeverSent, &["did not run"]);
    judge_surfaced_then_recovered(ops, &never_sent)
}

/// H2.2 in the row table.
pub const H2_2: RowGate = RowGate {
    id: "H2.2",
    file: file!(),
    scenario: |env| Box::pin(blackholed_daemon_queue(env)),
    judge: judge_blackholed_queue,
    controls: &[],
};
