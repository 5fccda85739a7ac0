//! H2.6: the daemon replaced: the next call reaches an initialized session (the handshake was
//! replayed). Its scenario and judge.

use harness::ports::pid_alive;
use harness::{Stage, poll};
use reticle::proxy::events as proxy_events;
use serde_json::json;

use crate::fault;
use crate::history::{History, Op};
use crate::judge::{self, Judgement, RowOutcome};
use crate::rows::RowGate;
use crate::scenarios::agent::events;
use crate::scenarios::agent_kit;
use crate::scenarios::agent_kit::{judge_survival, judge_survival_then, warm_agent};
use crate::scenarios::kit::{BOUND, judged, observe};
use crate::scenarios::proxied::PROBE;
use crate::scenarios::{GateEnv, Ran, proxy_options};

/// H2.6: the daemon SIGKILLed and replaced (the proxy starts a new one); the next call must reach
/// an initialized session: the handshake was replayed, and the daemon logged no refusal.
pub async fn handshake_replayed_after_restart(env: &GateEnv) -> Ran {
    let history = History::new();
    let Stage { state, port, _reap } = Stage::default();
    let options = proxy_options(env, port, state.path());
    let agent = match warm_agent(
        &history,
        options.clone(),
        fault::SIGKILL_DAEMON,
        judge_survival,
    )
    .await
    {
        Ok(agent) => agent,
        Err(ran) => return ran,
    };
    let before = reticle::probe::fetch_status(port, PROBE).await;
    let killed = match &before {
        Some(status) => {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(status.pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
            poll::within(BOUND, async || (!pid_alive(status.pid)).then_some(()))
                .await
                .is_some()
        }
        None => false,
    };
    history.fault(
        fault::SIGKILL_DAEMON,
        killed,
        json!({ "pid": before.as_ref().map(|s| s.pid), "instance": before.as_ref().map(|s| s.instance.clone()) }),
    );
    // "Then call": once the proxy has seen the daemon go.
    let seen = poll::within(BOUND, async || {
        events(&options, proxy_events::CONNECTION_LOST)
            .into_iter()
            .next()
    })
    .await
    .is_some();
    observe(&history, "loss_seen", json!({ "seen": seen }));
    let result = agent.call("reticle_sessions", json!({})).await;
    let after = reticle::probe::fetch_status(port, PROBE).await;
    agent.close().await;
    let refused = std::fs::read_to_string(state.path().join(format!("daemon-{port}.log")))
        .unwrap_or_default()
        .contains("mcp_call_refused");
    let served_by = result
        .as_ref()
        .ok()
        .map(|r| r["structuredContent"]["daemon"]["instance"].clone());
    observe(
        &history,
        AFTER_RESTART,
        json!({ "servedBy": served_by, "instanceNow": after.map(|s| s.instance), "callRefusedLogged": refused }),
    );
    judged(history, judge_handshake_replayed)
}

/// The observation of the daemon after the restart: the instance that served the call, the
/// instance `/status` then named, and whether the daemon's log holds `mcp_call_refused`:
/// `{"servedBy", "instanceNow", "callRefusedLogged"}`.
const AFTER_RESTART: &str = "after_restart";

/// H2.6's judge, from the history alone: every call after the SIGKILL survived, no refusal in
/// the daemon's log (observed), and the call served by the new instance, not the killed one
/// (as the fault recorded it).
pub fn judge_handshake_replayed(ops: &[Op]) -> Judgement {
    judge_survival_then(ops, |_| {
        let seen = agent_kit::last_observed(ops, AFTER_RESTART)
            .map(|o| o.value.clone())
            .unwrap_or_default();
        if seen["callRefusedLogged"] == true {
            return Judgement::new(
                RowOutcome::Silent,
                "a call reached an uninitialized session (the daemon logged mcp_call_refused)",
            );
        }
        let old_instance = judge::established_fault(ops)
            .map(|f| f.value["instance"].clone())
            .unwrap_or_default();
        let (served_by, new_instance) = (&seen["servedBy"], &seen["instanceNow"]);
        if new_instance.is_null() || *new_instance == old_instance || served_by != new_instance {
            return Judgement::new(
                RowOutcome::Inconclusive,
                format!(
                    "the call was not shown to reach a new daemon: served by {served_by}, now {new_instance}"
                ),
            );
        }
        Judgement::new(
            RowOutcome::Survived,
            "the call after SIGKILL and restart reached the new daemon's initialized session; no refusal logged",
        )
    })
}

/// H2.6 in the row table.
pub const H2_6: RowGate = RowGate {
    id: "H2.6",
    file: file!(),
    scenario: |env| Box::pin(handshake_replayed_after_restart(env)),
    judge: judge_handshake_replayed,
    controls: &[],
};
