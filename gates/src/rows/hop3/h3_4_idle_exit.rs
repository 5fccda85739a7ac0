//! H3.4: an idle exit is logged with its reason and reported by `status` as the last exit. Its
//! scenario and judge.

use harness::{OwnedDaemon, poll};
use serde_json::json;

use super::{BOUND, TRACE, after_fault, call, last_cli, report_of, status_args};
use crate::controls::StandIn;
use crate::fault;
use crate::history::{History, Op};
use crate::judge::{Judgement, RowOutcome};
use crate::rows::RowGate;
use crate::scenarios::fault_trace::record_trace_under_faults;
use crate::scenarios::kit::judged;
use crate::scenarios::{GateEnv, Ran};

/// H3.4: an idle exit is logged with its reason and reported by `status` as the last exit.
pub async fn idle_exit_is_reported(env: &GateEnv) -> Ran {
    let history = History::new();
    let mut daemon = OwnedDaemon::builder()
        .env(reticle::config::env::IDLE_SHUTDOWN_MS, "200")
        .env(TRACE, "1")
        .start()
        .await;
    let exited = poll::within(BOUND, async || daemon.has_exited().then_some(()))
        .await
        .is_some();
    history.fault(fault::IDLE_PAST_BOUND, exited, json!({ "boundMs": 200 }));
    let port = daemon.port().to_string();
    call(&history, env, daemon.state_dir(), &status_args(&port)).await;
    record_trace_under_faults(&history, &daemon.log_path()).await;
    judged(history, judge_idle_exit)
}

/// H3.4's judge: the `status` report after the idle exit reads a clean last exit, idle.
pub fn judge_idle_exit(ops: &[Op]) -> Judgement {
    after_fault(ops, |_| {
        let exit = &report_of(last_cli(ops, "status"))["lastExit"];
        let reason = exit["reason"].as_str().unwrap_or("");
        if exit["kind"] == "clean" && reason.contains("idle") {
            Judgement::new(RowOutcome::Surfaced, format!("last exit: clean, {reason}"))
        } else {
            Judgement::new(
                RowOutcome::Silent,
                format!("last exit after an idle shutdown: {exit}"),
            )
        }
    })
}

/// H3.4 in the row table.
pub const H3_4: RowGate = RowGate {
    id: "H3.4",
    file: file!(),
    scenario: |env| Box::pin(idle_exit_is_reported(env)),
    judge: judge_idle_exit,
    controls: &[StandIn::StatusSaysRunning],
};
