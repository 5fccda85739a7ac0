//! H2.4: a squatter on the port that accepts and never serves: `initialize` is answered, and
//! the first tool call fails naming the port and the squatter. Its scenario and judge.

use std::time::Instant;

use harness::ports::listeners;
use harness::{Stage, poll};
use reticle::mcp::jsonrpc::LostPopulation;
use serde_json::{Value, json};

use super::{Surfacing, judge_surfaced_then_recovered};
use crate::fault;
use crate::history::{History, Op};
use crate::judge::{self, Judgement};
use crate::rows::RowGate;
use crate::scenarios::agent::Agent;
use crate::scenarios::agent_kit;
use crate::scenarios::agent_kit::{
    judge_surfacing, mark_call_under_fault, record_served_again, serves,
};
use crate::scenarios::kit::{BOUND, judged, ms_since, observe, unestablished};
use crate::scenarios::{GateEnv, Ran, proxy_options};

/// H2.4: a squatter on the port that accepts and never serves. `initialize` must be answered
/// before any daemon exists (the squatter the port's only listener when the answer is in; its
/// time is measured by the benchmark, not judged), the first tool call must fail naming the port and the squatter's pid
/// and saying it did not run, and once the squatter leaves the proxy serves (starting a daemon).
pub async fn squatter_on_the_port(env: &GateEnv) -> Ran {
    let history = History::new();
    let Stage { state, port, _reap } = Stage::default();
    let squatter = match Squatter::start(port) {
        Ok(squatter) => squatter,
        Err(why) => return unestablished(history, fault::SQUAT_PORT, &why, judge_surfacing),
    };
    let pid = std::process::id();
    let listening = listeners(port).iter().any(|h| h.pid == pid);
    history.fault(
        fault::SQUAT_PORT,
        listening,
        json!({ "port": port, "pid": pid, "note": "the gate process itself accepts and never answers" }),
    );
    let started = Instant::now();
    let agent = tokio::time::timeout(
        BOUND,
        Agent::start(&history, proxy_options(env, port, state.path())),
    )
    .await;
    // The promise: `initialize` is answered before any daemon exists (the squatter is the only
    // listener when the answer is in). Its time is the benchmark's, never judged here.
    let holders: Vec<u32> = listeners(port).iter().map(|h| h.pid).collect();
    let daemon_existed = holders.iter().any(|holder| *holder != pid);
    observe(
        &history,
        INITIALIZE_ANSWERED,
        json!({ "ms": ms_since(started), "listeners": holders, "daemonExisted": daemon_existed }),
    );
    let Ok(Ok(agent)) = agent else {
        return judged(history, judge_surfacing);
    };
    mark_call_under_fault(&history);
    let _ = agent.call("reticle_sessions", json!({})).await;
    squatter.leave();
    let left = poll::within(BOUND, async || listeners(port).is_empty().then_some(()))
        .await
        .is_some();
    record_served_again(&history, left && serves(&agent).await);
    agent.close().await;
    judged(history, judge_squatter)
}

/// The observation of when `initialize` was answered: `{"ms", "listeners", "daemonExisted"}`.
const INITIALIZE_ANSWERED: &str = "initialize_answered";

/// H2.4's judge, from the history alone: the marked call answered -32001 `never_sent` naming the
/// squatted port and the squatter's pid (as the fault recorded them) and saying it did not run,
/// belied when `initialize` was answered only once a daemon listened (observed), then the link
/// served again.
pub fn judge_squatter(ops: &[Op]) -> Judgement {
    let squat = judge::established_fault(ops).map(|f| &f.value);
    let (port, pid) = match squat {
        Ok(value) => (value["port"].clone(), value["pid"].clone()),
        Err(_) => (Value::Null, Value::Null),
    };
    let initialize = agent_kit::last_observed(ops, INITIALIZE_ANSWERED).map(|o| &o.value);
    let daemon_existed = initialize.is_some_and(|v| v["daemonExisted"] == true);
    let holders = initialize
        .map(|v| v["listeners"].clone())
        .unwrap_or_default();
    let never_sent = Surfacing::answered(
        LostPopulation::NeverSent,
        &[
            &format!("port {port}"),
            &format!("pid {pid}"),
            "did not run",
        ],
    )
    .belied_by(daemon_existed.then(|| {
        format!(
            "initialize was answered only once another process listened on port {port} (pids {holders}): it waited for a daemon"
        )
    }))
    .by(SQUATTER);
    judge_surfaced_then_recovered(ops, &never_sent)
}

/// H2.4's nemesis, as its evidence names it.
const SQUATTER: &str = "the gate's own listener, which accepts and never answers";

/// A listener inside the gate process that accepts every connection and never answers.
struct Squatter {
    task: tokio::task::JoinHandle<()>,
}

impl Squatter {
    fn start(port: u16) -> Result<Self, String> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", port))
            .and_then(|l| l.set_nonblocking(true).map(|()| l))
            .and_then(tokio::net::TcpListener::from_std)
            .map_err(|e| format!("could not squat port {port}: {e}"))?;
        let task = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                held.push(socket);
            }
        });
        Ok(Self { task })
    }

    /// Closes the listener and every connection it held.
    fn leave(self) {
        self.task.abort();
    }
}

impl Drop for Squatter {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// H2.4 in the row table.
pub const H2_4: RowGate = RowGate {
    id: "H2.4",
    file: file!(),
    scenario: |env| Box::pin(squatter_on_the_port(env)),
    judge: judge_squatter,
    controls: &[],
};
