//! H3.5: a daemon started through a shell survives SIGTERM to that shell's process group. Its
//! scenario and judge.

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use harness::cli::{self};
use harness::{free_port, marker, poll};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::json;

use super::{BOUND, TRACE, after_fault, call, last_cli, report_of, status_args};
use crate::controls::StandIn;
use crate::fault;
use crate::history::{History, Op};
use crate::judge::{Judgement, RowOutcome, one_line};
use crate::rows::RowGate;
use crate::scenarios::fault_trace::record_trace_under_faults;
use crate::scenarios::kit::judged;
use crate::scenarios::{GateEnv, Ran};

/// H3.5: a daemon started through a shell survives SIGTERM to that shell's process group.
pub async fn survives_caller_group_sigterm(env: &GateEnv) -> Ran {
    let history = History::new();
    let state = tempfile::tempdir().expect("state dir");
    let port = free_port();
    let script = format!(
        "'{}' serve --port {port} && exec sleep 60",
        env.reticle.display()
    );
    let mut shell = Command::new("sh");
    shell
        .args(["-c", &script])
        .env(reticle::config::env::STATE_DIR, state.path())
        .env(TRACE, "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    marker::mark(&mut shell);
    let Ok(mut shell) = shell.spawn() else {
        history.fault(
            fault::SIGTERM_CALLER_GROUP,
            false,
            json!({ "reason": "sh did not start" }),
        );
        return judged(history, judge_caller_group_sigterm);
    };
    let before = poll::within(BOUND, async || {
        reticle::probe::fetch_status(port, Duration::from_millis(300)).await
    })
    .await;
    let signalled =
        before.is_some() && kill(Pid::from_raw(-(shell.id() as i32)), Signal::SIGTERM).is_ok();
    let shell_gone = poll::within(BOUND, async || {
        matches!(shell.try_wait(), Ok(Some(_))).then_some(())
    })
    .await;
    history.fault(
        fault::SIGTERM_CALLER_GROUP,
        signalled && shell_gone.is_some(),
        json!({ "port": port, "daemonStarted": before.is_some(),
                "instance": before.map(|s| s.instance) }),
    );
    let port_arg = port.to_string();
    call(&history, env, state.path(), &status_args(&port_arg)).await;
    let _ = cli::run_with(&env.reticle, state.path(), &["stop", "--port", &port_arg]).await;
    let log = state.path().join(format!("daemon-{port}.log"));
    record_trace_under_faults(&history, &log).await;
    judged(history, judge_caller_group_sigterm)
}

/// H3.5's judge: the `status` report after the SIGTERM names the daemon instance that answered
/// before it (as the fault recorded it).
pub fn judge_caller_group_sigterm(ops: &[Op]) -> Judgement {
    after_fault(ops, |fault| {
        let report = report_of(last_cli(ops, "status"));
        let before = fault.value["instance"].as_str();
        if before == report["daemon"]["instance"].as_str() {
            Judgement::new(
                RowOutcome::Survived,
                "the same daemon instance answers after its caller's group was SIGTERMed",
            )
        } else {
            Judgement::new(
                RowOutcome::Silent,
                format!(
                    "the daemon died with its caller: {}",
                    one_line(&report.to_string())
                ),
            )
        }
    })
}

/// H3.5 in the row table.
pub const H3_5: RowGate = RowGate {
    id: "H3.5",
    file: file!(),
    scenario: |env| Box::pin(survives_caller_group_sigterm(env)),
    judge: judge_caller_group_sigterm,
    controls: &[StandIn::StatusSaysRunning],
};
