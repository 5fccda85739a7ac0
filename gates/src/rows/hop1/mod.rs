//! Hop 1 rows (agent ↔ `reticle mcp` over stdio), one file each, and what they share: the
//! supervisor's liveness as an observation. Calls go through a real MCP client or, for what no
//! client sends and for counting answers, line by line. Every judge first checks that every call
//! was answered exactly once, and reads its history alone.

pub mod h1_1_lsof_recipe;
pub mod h1_2_panic_in_request;
pub mod h1_3_wedged_port;
pub mod h1_4_stdin_closed;
pub mod h1_5_garbage_on_stdin;

use harness::ports::pid_alive;
use serde_json::{Value, json};

use crate::history::{History, Op};
use crate::scenarios::agent_kit::last_observed;
use crate::scenarios::kit::observe;

/// The observation of the supervisor's liveness: `{"pid", "alive"}`.
const SUPERVISOR: &str = "supervisor";

/// Whether the supervisor (pid `pid`) is alive, recorded as the observation [`SUPERVISOR`].
fn supervisor_alive(history: &History, pid: u32) -> bool {
    let alive = pid_alive(pid);
    observe(history, SUPERVISOR, json!({ "pid": pid, "alive": alive }));
    alive
}

/// The value of the harness's last observation `f`.
fn observed_value<'a>(ops: &'a [Op], f: &str) -> Option<&'a Value> {
    last_observed(ops, f).map(|o| &o.value)
}
