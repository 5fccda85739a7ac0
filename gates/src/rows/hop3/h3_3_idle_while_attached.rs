//! H3.3: a daemon with an agent attached must not idle out while the agent is silent; its calls
//! keep reaching the same daemon. Its scenario and judge.

use harness::{OwnedDaemon, poll};
use serde_json::json;

use super::{BOUND, TRACE};
use crate::controls::StandIn;
use crate::fault;
use crate::history::{Actor, History, Op};
use crate::judge::{self, Judgement, RowOutcome};
use crate::rows::RowGate;
use crate::scenarios::agent_kit::{judge_survival, warm_agent};
use crate::scenarios::fault_trace::record_trace_under_faults;
use crate::scenarios::kit;
use crate::scenarios::kit::judged;
use crate::scenarios::{GateEnv, Ran, proxy_options};

/// H3.3: a daemon with a 300 ms idle bound and an attached `reticle mcp` must not idle out
/// while the agent is silent for forty heartbeats (four times the bound); its calls after that
/// keep reaching the same daemon.
pub async fn idle_while_attached(env: &GateEnv) -> Ran {
    let history = History::new();
    let state = tempfile::tempdir().expect("state dir");
    let daemon = OwnedDaemon::builder()
        .state_dir(state.path())
        .env(reticle::config::env::IDLE_SHUTDOWN_MS, "300")
        .env(reticle::config::env::HEARTBEAT_MS, "30")
        .env(TRACE, "1")
        .start()
        .await;
    let options = proxy_options(env, daemon.port(), state.path());
    let agent = match warm_agent(
        &history,
        options,
        fault::IDLE_BOUND_PASSED_ATTACHED,
        judge_survival,
    )
    .await
    {
        Ok(agent) => agent,
        Err(ran) => return ran,
    };
    let log = daemon.log_path();
    let beats = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .matches("daemon_alive")
            .count()
    };
    let before = beats();
    let passed = poll::within(BOUND, async || (beats() >= before + 40).then_some(()))
        .await
        .is_some();
    history.fault(
        fault::IDLE_BOUND_PASSED_ATTACHED,
        passed,
        json!({ "boundMs": 300, "heartbeatMs": 30, "heartbeats": beats().saturating_sub(before) }),
    );
    for _ in 0..2 {
        let _ = agent.call("reticle_sessions", json!({})).await;
    }
    let answered_by = daemon.status().await.map(|s| s.instance);
    kit::observe(
        &history,
        DAEMON_INSTANCE,
        json!({ "started": daemon.instance(), "answeredBy": answered_by }),
    );
    agent.close().await;
    record_trace_under_faults(&history, &daemon.log_path()).await;
    judged(history, judge_idle_while_attached)
}

/// The observation of which daemon instance the harness started and which answered `/status`
/// after the fault (H3.3).
const DAEMON_INSTANCE: &str = "daemon_instance";

/// H3.3's judge: the daemon that answered after forty heartbeats is the one started (as the
/// harness observed it), and the agent's calls survived.
pub fn judge_idle_while_attached(ops: &[Op]) -> Judgement {
    let observed = ops
        .iter()
        .rfind(|o| o.actor == Actor::Harness && o.f == DAEMON_INSTANCE);
    match observed {
        Some(seen)
            if seen.value["answeredBy"].is_null()
                || seen.value["answeredBy"] != seen.value["started"] =>
        {
            return Judgement::new(
                RowOutcome::Silent,
                "the daemon idled out while a client stream was attached",
            );
        }
        None if judge::established_fault(ops).is_ok() => {
            return Judgement::new(
                RowOutcome::Inconclusive,
                "which daemon answered after the fault was not recorded",
            );
        }
        _ => {}
    }
    let verdict = judge_survival(ops);
    if verdict.outcome != RowOutcome::Survived {
        return verdict;
    }
    Judgement::new(
        RowOutcome::Survived,
        format!(
            "{}; the same daemon still answers after forty heartbeats (four times its 300 ms idle bound) with the agent attached and silent",
            verdict.evidence
        ),
    )
}

/// H3.3 in the row table.
pub const H3_3: RowGate = RowGate {
    id: "H3.3",
    file: file!(),
    scenario: |env| Box::pin(idle_while_attached(env)),
    judge: judge_idle_while_attached,
    controls: &[StandIn::ToolsRefuseAfterWarmUp],
};
