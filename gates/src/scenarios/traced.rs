//! The trace check of the bridge and SDK fault scenarios (hops 4 and 5): each runs its daemon
//! traced ([`TRACED`]) and, once its fault has happened, makes one tool call through a real agent
//! ([`TRACED_CALL`]), then checks the trace for T1 to T4: a broken trace makes the row silent,
//! one with no span inconclusive. It calls and records; it must not judge.

use std::path::PathBuf;

use harness::{OwnedDaemon, OwnedDaemonBuilder, SdkRig};
use serde_json::json;

use super::agent::Agent;
use super::fault_trace;
use super::kit;
use super::{GateEnv, proxy_options};
use crate::history::History;

/// The daemon environment that traces it (`RETICLE_TRACE=1`).
pub const TRACED: &[(&str, &str)] = &[(reticle::config::env::TRACE, "1")];

/// The tool the agent calls: it lists the daemon's sessions, the bridge state the fault hit.
const TOOL: &str = "reticle_sessions";

/// Makes one tool call through a real agent to `daemon` (traced), recorded in `history`, then
/// records what the trace checker found in the daemon's log after it.
pub async fn call_then_check_trace(env: &GateEnv, history: &History, daemon: &OwnedDaemon) {
    let (log, calls) = call_through_an_agent(env, history, daemon).await;
    fault_trace::record_trace_after_tool_calls(history, &log, calls).await;
}

/// Makes one tool call through a real agent to `daemon` and closes the agent; the agent's own
/// history is recorded in `history` as one observation ([`TRACED_CALL`]), so the row's judge,
/// which reads its own calls, never takes it for one of them. The daemon's log and the tool
/// calls made, for a trace check later (a scenario whose daemon stays down after its fault
/// calls before it and checks after).
pub async fn call_through_an_agent(
    env: &GateEnv,
    history: &History,
    daemon: &OwnedDaemon,
) -> (PathBuf, usize) {
    let options = proxy_options(env, daemon.port(), daemon.state_dir());
    let calls = History::new();
    if let Ok(agent) = Agent::start(&calls, options).await {
        let _ = agent.call(TOOL, json!({})).await;
        agent.close().await;
    }
    kit::observe(
        history,
        TRACED_CALL,
        json!({ "tool": TOOL, "ops": calls.ops() }),
    );
    (daemon.log_path(), 1)
}

/// The observation of the tool call made so the daemon's trace has spans: `{"tool", "ops"}`,
/// the agent's own history of it.
pub const TRACED_CALL: &str = "traced_tool_call";

/// [`call_then_check_trace`] on the rig's daemon, when it is running (a rig whose daemon is down
/// has no trace to add to what its row's judge sees).
pub async fn call_on_rig_then_check_trace(env: &GateEnv, history: &History, rig: &SdkRig) {
    if let Some(daemon) = rig.daemon() {
        call_then_check_trace(env, history, daemon).await;
    }
}

/// A daemon builder with [`TRACED`] set.
pub fn builder() -> OwnedDaemonBuilder {
    TRACED
        .iter()
        .fold(OwnedDaemon::builder(), |builder, (key, value)| {
            builder.env(key, *value)
        })
}
