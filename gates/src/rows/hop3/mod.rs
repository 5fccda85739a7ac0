//! Hop 3 rows (the daemon's lifecycle), one file each, and what they share: CLI calls recorded
//! as a user sees them ([`call`]: `ok` for exit 0, `fail` otherwise, `info` for a hang) and what
//! a judge reads back from them. Each judge reads the history alone. The daemons of H3.2 to
//! H3.6 are traced, and each trace checked for T1 to T4 as the scenario ends.

pub mod h3_1_squatted_serve;
pub mod h3_2_stopped_status;
pub mod h3_3_idle_while_attached;
pub mod h3_4_idle_exit;
pub mod h3_5_caller_group_sigterm;
pub mod h3_6_sigkill;
pub mod h3_7_racing_daemons;
pub mod h3_8_connection_on_the_port;

use std::path::Path;
use std::time::Duration;

use harness::cli::{self, Ran as CliRan};
use serde_json::{Value, json};

use crate::history::{Actor, History, Op, OpType};
use crate::judge::{self, Judgement};
use crate::scenarios::GateEnv;
use crate::scenarios::kit;

const BOUND: Duration = Duration::from_secs(15);

/// The variable that makes a daemon write its trace: every daemon a scenario here starts is
/// traced, and its trace checked for T1 to T4 as the scenario ends.
const TRACE: &str = reticle::config::env::TRACE;

/// Runs `reticle <args>` (bounded) and records it as a client call: `ok` for exit 0, `fail` for
/// any other exit, `info` when it did not exit within the harness's bound (the row is then
/// silent, "hung").
async fn call(history: &History, env: &GateEnv, state: &Path, args: &[&str]) -> CliRan {
    let f = args.first().copied().unwrap_or("reticle");
    history.invoke(f, json!({ "args": args }));
    let ran = cli::run_with(&env.reticle, state, args).await;
    kit::complete_cli(history, f, &ran);
    ran
}

/// The arguments of `reticle status --port <port> --json`, whose report the judges read back
/// from its recorded completion ([`report_of`]).
fn status_args(port: &str) -> [&str; 4] {
    ["status", "--port", port, "--json"]
}

/// Whether `op` is the recorded end of the CLI call `f`.
fn is_completion(op: &Op, f: &str) -> bool {
    op.actor == Actor::Client && op.f == f && op.op_type != OpType::Invoke
}

/// The last recorded end of the CLI call `f`.
fn last_cli<'a>(ops: &'a [Op], f: &str) -> Option<&'a Op> {
    ops.iter().rev().find(|o| is_completion(o, f))
}

/// What a recorded CLI call printed, stdout then stderr, as its user read it.
fn said(op: &Op) -> String {
    let stream = |key: &str| op.value[key].as_str().unwrap_or("").to_string();
    format!("{}\n{}", stream("stdout"), stream("stderr"))
}

/// The JSON report a recorded `status --json` printed (null when it printed none, or there is
/// no such call).
fn report_of(op: Option<&Op>) -> Value {
    op.and_then(|o| o.value["stdout"].as_str())
        .and_then(|out| serde_json::from_str(out.trim()).ok())
        .unwrap_or(Value::Null)
}

/// The values the established fault recorded under `keys`, as words (none when the fault was
/// not established: the judge then says so).
fn fault_words(ops: &[Op], keys: &[&str]) -> Vec<String> {
    let Ok(fault) = judge::established_fault(ops) else {
        return Vec::new();
    };
    keys.iter()
        .map(|key| match &fault.value[*key] {
            Value::String(word) => word.clone(),
            other => other.to_string(),
        })
        .collect()
}

/// `judge` of the established fault; else the inconclusive judgement saying why.
fn after_fault(ops: &[Op], judge: impl FnOnce(&Op) -> Judgement) -> Judgement {
    match judge::established_fault(ops) {
        Ok(fault) => judge(fault),
        Err(inconclusive) => inconclusive,
    }
}
