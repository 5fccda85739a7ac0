//! H1.3: the port wedged past the reconnect budget: the proxy goes dormant, answers `ping`,
//! refuses a call naming the port, and serves again once the wedge clears. Its scenario and
//! judge.

use std::time::Duration;

use harness::ports::pid_alive;
use harness::{OwnedDaemon, poll};
use reticle::proxy::events as proxy_events;
use serde_json::json;
use toxics::ToxicSpec;
use toxics::toxic::ResetPeer;

use super::{SUPERVISOR, observed_value, supervisor_alive};
use crate::fault;
use crate::history::{History, Op};
use crate::judge::{self, Judgement, RowOutcome};
use crate::rows::RowGate;
use crate::scenarios::agent::events;
use crate::scenarios::agent_kit::{
    answered_once_after_fault, call_under_fault, judge_survival, mark_call_under_fault,
    record_served_again, served_again, serves, warm_agent,
};
use crate::scenarios::kit::{judged, observe};
use crate::scenarios::proxied::ProxiedDaemon;
use crate::scenarios::{GateEnv, Ran};

/// H1.3: the port wedged (every connection accepted, then reset at its first byte: `reset_peer`
/// both ways on the fault proxy the proxy takes for the daemon) past a reconnect budget of 2.
/// The proxy goes dormant and never exits, answers `ping`, refuses a call naming the port, and
/// serves again once the wedge goes.
pub async fn wedge_past_the_budget(env: &GateEnv) -> Ran {
    let history = History::new();
    let (_state, link, options) = match ProxiedDaemon::start_for(
        env,
        &history,
        OwnedDaemon::builder(),
        fault::WEDGE_PORT,
        judge_survival,
    )
    .await
    {
        Ok(opened) => opened,
        Err(ran) => return ran,
    };
    let options = options.env(reticle::config::env::RECONNECT_ATTEMPTS, "2");
    let agent = match warm_agent(&history, options.clone(), fault::WEDGE_PORT, judge_survival).await
    {
        Ok(agent) => agent,
        Err(ran) => return ran,
    };
    let wedge = [
        ToxicSpec::new(ResetPeer { timeout: 0 }).upstream(),
        ToxicSpec::new(ResetPeer { timeout: 0 }),
    ];
    let (wedged, detail) = link.cut(&wedge).await;
    history.fault(fault::WEDGE_PORT, wedged, detail);
    // The dormant line is written just after the budget line: wait for both (a proxy that never
    // goes dormant costs the whole bound), then read what is there.
    let budget = || {
        let spent = events(&options, proxy_events::CONNECTION_LOST)
            .into_iter()
            .find(|e| e["stage"] == "budget_spent");
        let dormant = events(&options, proxy_events::STATE)
            .iter()
            .any(|e| e["to"] == "dormant");
        (spent, dormant)
    };
    poll::within(Duration::from_secs(60), async || {
        let (spent, dormant) = budget();
        (spent.is_some() && dormant).then_some(())
    })
    .await;
    let (spent, dormant) = budget();
    observe(
        &history,
        BUDGET,
        json!({ "spent": spent.is_some(), "dormant": dormant, "alive": pid_alive(agent.pid()), "event": spent }),
    );
    let _ = agent.ping().await;
    mark_call_under_fault(&history);
    let _ = agent.call("reticle_sessions", json!({})).await;
    link.heal(&history).await;
    record_served_again(&history, serves(&agent).await);
    supervisor_alive(&history, agent.pid());
    agent.close().await;
    link.close(&history).await;
    judged(history, judge_wedge)
}

/// The observation of the reconnect budget once the wedge went on, as the proxy's log said it:
/// `{"spent", "dormant", "alive", "event"}`.
const BUDGET: &str = "budget";

/// H1.3's judge, from the history alone: the budget as the proxy's log said it and the proxy's
/// liveness (observed), the marked call in the wedge refused naming the port the wedge was put
/// on, and the link served again once it went (observed). A scenario that stopped before the
/// wedge is judged by the survival judge.
pub fn judge_wedge(ops: &[Op]) -> Judgement {
    let Some(budget) = observed_value(ops, BUDGET) else {
        return judge_survival(ops);
    };
    let wedge = match answered_once_after_fault(ops).and_then(|()| judge::established_fault(ops)) {
        Ok(wedge) => wedge,
        Err(unproven) => return unproven,
    };
    if budget["spent"] != true {
        return Judgement::new(
            RowOutcome::Inconclusive,
            "the reconnect budget was never spent, so the row's condition was not reached",
        );
    }
    let alive = observed_value(ops, SUPERVISOR).is_some_and(|seen| seen["alive"] == true);
    if budget["alive"] != true || !alive {
        return Judgement::new(
            RowOutcome::Silent,
            "the proxy exited once its budget was spent",
        );
    }
    if budget["dormant"] != true {
        return Judgement::new(
            RowOutcome::Silent,
            "the budget was spent but the proxy never said it went dormant",
        );
    }
    let port = wedge.value["port"].to_string();
    let refused = match call_under_fault(ops, "tools/call").flatten() {
        Some(call) => judge::answer_names(ops, call, &[&port]),
        None => Judgement::new(RowOutcome::Inconclusive, "no call was made in the wedge"),
    };
    if refused.outcome != RowOutcome::Surfaced {
        return refused;
    }
    if !served_again(ops) {
        return Judgement::new(
            RowOutcome::Silent,
            "the proxy never served a call again after the wedge went",
        );
    }
    Judgement::new(
        RowOutcome::Survived,
        format!(
            "budget of 2 spent, dormant and alive; the call in the wedge was refused naming port {port}; served again once it went (nemesis: {})",
            wedge.value["nemesis"].as_str().unwrap_or("?")
        ),
    )
}

/// H1.3 in the row table.
pub const H1_3: RowGate = RowGate {
    id: "H1.3",
    file: file!(),
    scenario: |env| Box::pin(wedge_past_the_budget(env)),
    judge: judge_wedge,
    controls: &[],
};
