//! H1.1: the `lsof … | xargs kill -9` recipe run mid-session; the next calls must succeed
//! through a new worker and daemon. Its scenario and judge.

use std::collections::BTreeSet;
use std::process::Command;

use harness::ports::{holders, listeners, pid_alive};
use harness::{Stage, marker, poll};
use serde_json::{Value, json};

use super::{SUPERVISOR, observed_value, supervisor_alive};
use crate::controls::StandIn;
use crate::fault;
use crate::history::{History, Op};
use crate::judge::{self, Judgement, RowOutcome};
use crate::rows::RowGate;
use crate::scenarios::agent_kit::{judge_survival, judge_survival_then, warm_agent};
use crate::scenarios::kit::{BOUND, judged, observe, unestablished};
use crate::scenarios::{GateEnv, Ran, proxy_options};

/// H1.1: the `lsof -ti tcp:PORT | xargs kill -9` recipe, run for real mid-session, kills every
/// process with a socket on the port (the daemon and the worker). The supervisor owns stdio and
/// holds no socket, so the very next calls must succeed through a new worker and daemon.
pub async fn lsof_recipe_mid_session(env: &GateEnv) -> Ran {
    let history = History::new();
    let Stage { state, port, _reap } = Stage::default();
    let options = proxy_options(env, port, state.path());
    let agent = match warm_agent(&history, options, fault::LSOF_KILL_RECIPE, judge_survival).await {
        Ok(agent) => agent,
        Err(ran) => return ran,
    };
    // The gate itself must hold no socket on the port, or the recipe would kill it too.
    let me = std::process::id();
    let Some(held) = poll::within(BOUND, async || {
        let held = holders(port);
        held.iter().all(|h| h.pid != me).then_some(held)
    })
    .await
    else {
        agent.close().await;
        return unestablished(
            history,
            fault::LSOF_KILL_RECIPE,
            "the gate still held a socket on the port, so running the recipe would kill it",
            judge_survival,
        );
    };
    let victims: BTreeSet<u32> = held.iter().map(|h| h.pid).collect();
    let daemon = listeners(port).first().map(|h| h.pid);
    let supervisor = agent.pid();
    observe(
        &history,
        "port_holders",
        json!({ "port": port, "pids": victims, "daemon": daemon, "supervisor": supervisor,
                "supervisorHoldsASocket": victims.contains(&supervisor) }),
    );
    let recipe = format!("lsof -ti tcp:{port} | xargs kill -9");
    let mut shell = Command::new("sh");
    shell.args(["-c", &recipe]);
    marker::mark(&mut shell);
    let ran = shell.status();
    let dead = poll::within(BOUND, async || {
        victims.iter().all(|pid| !pid_alive(*pid)).then_some(())
    })
    .await
    .is_some();
    history.fault(
        fault::LSOF_KILL_RECIPE,
        matches!(ran, Ok(s) if s.success()) && dead && daemon.is_some(),
        json!({ "recipe": recipe, "killed": victims, "daemon": daemon,
                "ran": ran.map(|s| s.code()).map_err(|e| e.to_string()) }),
    );
    for _ in 0..4 {
        let _ = agent.call("reticle_sessions", json!({})).await;
    }
    supervisor_alive(&history, supervisor);
    agent.close().await;
    judged(history, judge_lsof_recipe)
}

/// H1.1's judge: every call after the recipe survived, and the supervisor lived (both as the
/// history recorded them: the fault's killed pids, the harness's last look at the supervisor).
pub fn judge_lsof_recipe(ops: &[Op]) -> Judgement {
    judge_survival_then(ops, |survived| {
        let Some(seen) = observed_value(ops, SUPERVISOR) else {
            return Judgement::new(
                RowOutcome::Inconclusive,
                "the supervisor was never looked at after the recipe",
            );
        };
        if seen["alive"] != true {
            return Judgement::new(RowOutcome::Silent, "the supervisor died with the recipe");
        }
        let killed: Vec<u64> = judge::established_fault(ops)
            .ok()
            .and_then(|f| f.value["killed"].as_array().cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_u64)
            .collect();
        Judgement::new(
            RowOutcome::Survived,
            format!(
                "{survived} (killed pids {killed:?}; the supervisor, pid {}, held no socket)",
                seen["pid"]
            ),
        )
    })
}

/// H1.1 in the row table.
pub const H1_1: RowGate = RowGate {
    id: "H1.1",
    file: file!(),
    scenario: |env| Box::pin(lsof_recipe_mid_session(env)),
    judge: judge_lsof_recipe,
    controls: &[StandIn::ToolsRefuseAfterWarmUp],
};
