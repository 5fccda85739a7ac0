//! H3.6: a SIGKILLed daemon reads `died_silently`; the tidy control must read otherwise. Its
//! scenario and judge.

use harness::ports::pid_alive;
use harness::{OwnedDaemon, poll};
use nix::sys::signal::Signal;
use serde_json::json;

use super::{BOUND, TRACE, after_fault, call, is_completion, last_cli, report_of, status_args};
use crate::controls::StandIn;
use crate::fault;
use crate::history::{History, Op};
use crate::judge::{Judgement, RowOutcome, one_line};
use crate::rows::RowGate;
use crate::scenarios::fault_trace::record_trace_under_faults;
use crate::scenarios::kit::judged;
use crate::scenarios::{GateEnv, Ran};

/// H3.6: a SIGKILLed daemon reads `died_silently`; the tidy control must read otherwise.
pub async fn sigkill_reads_died_silently(env: &GateEnv) -> Ran {
    let history = History::new();
    let mut control = OwnedDaemon::builder()
        .env(reticle::config::env::HEARTBEAT_MS, "50")
        .env(TRACE, "1")
        .start()
        .await;
    let port = control.port().to_string();
    call(
        &history,
        env,
        control.state_dir(),
        &["stop", "--port", &port],
    )
    .await;
    poll::within(BOUND, async || control.has_exited().then_some(())).await;
    call(&history, env, control.state_dir(), &status_args(&port)).await;
    record_trace_under_faults(&history, &control.log_path()).await;

    let mut daemon = OwnedDaemon::builder()
        .env(reticle::config::env::HEARTBEAT_MS, "50")
        .env(TRACE, "1")
        .start()
        .await;
    daemon.signal(Signal::SIGKILL);
    let dead = poll::within(BOUND, async || daemon.has_exited().then_some(()))
        .await
        .is_some();
    history.fault(
        fault::SIGKILL_DAEMON,
        dead && !pid_alive(daemon.pid()),
        json!({ "pid": daemon.pid() }),
    );
    let port = daemon.port().to_string();
    call(&history, env, daemon.state_dir(), &status_args(&port)).await;
    record_trace_under_faults(&history, &daemon.log_path()).await;
    judged(history, judge_sigkill_exit)
}

/// H3.6's judge: the `status` report after the SIGKILL reads `died_silently`, while the one
/// before it (the control's tidy stop) read otherwise.
pub fn judge_sigkill_exit(ops: &[Op]) -> Judgement {
    after_fault(ops, |fault| {
        let tidy = report_of(
            ops.iter()
                .find(|o| o.index < fault.index && is_completion(o, "status")),
        );
        let tidy_kind = tidy["lastExit"]["kind"].as_str().unwrap_or("");
        let report = report_of(last_cli(ops, "status").filter(|o| o.index > fault.index));
        if tidy_kind == "died_silently" {
            return Judgement::new(
                RowOutcome::Inconclusive,
                "the control (a tidy stop) also read died_silently: the reader proves nothing",
            );
        }
        let exit = &report["lastExit"];
        if exit["kind"] == "died_silently" {
            Judgement::new(
                RowOutcome::Surfaced,
                format!(
                    "died_silently ({}); control read {tidy_kind}",
                    one_line(exit["reason"].as_str().unwrap_or(""))
                ),
            )
        } else {
            Judgement::new(
                RowOutcome::Silent,
                format!("a SIGKILLed daemon read as {exit}"),
            )
        }
    })
}

/// H3.6 in the row table.
pub const H3_6: RowGate = RowGate {
    id: "H3.6",
    file: file!(),
    scenario: |env| Box::pin(sigkill_reads_died_silently(env)),
    judge: judge_sigkill_exit,
    controls: &[StandIn::StatusSaysRunning],
};
