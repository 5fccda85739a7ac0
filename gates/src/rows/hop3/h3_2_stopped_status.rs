//! H3.2: a SIGSTOPped daemon (pid alive, port dead) must not read as running. Its scenario and
//! judge.

use harness::OwnedDaemon;
use nix::sys::signal::Signal;
use serde_json::{Value, json};

use super::{TRACE, after_fault, call, last_cli, report_of, status_args};
use crate::controls::StandIn;
use crate::fault;
use crate::history::{History, Op};
use crate::judge::{Judgement, RowOutcome, one_line};
use crate::rows::RowGate;
use crate::scenarios::fault_trace::record_trace_under_faults;
use crate::scenarios::kit::judged;
use crate::scenarios::{GateEnv, Ran};

/// H3.2: a SIGSTOPped daemon (pid alive, port dead) must not read as running.
pub async fn stopped_daemon_status(env: &GateEnv) -> Ran {
    let history = History::new();
    let daemon = OwnedDaemon::builder().env(TRACE, "1").start().await;
    let stopped = daemon.freeze().await;
    history.fault(
        fault::SIGSTOP_DAEMON,
        stopped,
        json!({ "pid": daemon.pid() }),
    );
    let port = daemon.port().to_string();
    call(&history, env, daemon.state_dir(), &status_args(&port)).await;
    daemon.signal(Signal::SIGCONT);
    record_trace_under_faults(&history, &daemon.log_path()).await;
    judged(history, judge_stopped_status)
}

/// H3.2's judge: the `status` report after the SIGSTOP says not running, stopped.
pub fn judge_stopped_status(ops: &[Op]) -> Judgement {
    after_fault(ops, |_| {
        let report = report_of(last_cli(ops, "status"));
        match (&report["running"], report["diagnosis"].as_str()) {
            (Value::Bool(false), Some(diagnosis)) if diagnosis.contains("stopped") => {
                Judgement::new(
                    RowOutcome::Surfaced,
                    format!("status: not running: {}", one_line(diagnosis)),
                )
            }
            _ => Judgement::new(
                RowOutcome::Silent,
                format!(
                    "status of a stopped daemon: {}",
                    one_line(&report.to_string())
                ),
            ),
        }
    })
}

/// H3.2 in the row table.
pub const H3_2: RowGate = RowGate {
    id: "H3.2",
    file: file!(),
    scenario: |env| Box::pin(stopped_daemon_status(env)),
    judge: judge_stopped_status,
    controls: &[StandIn::StatusSaysRunning],
};
