//! S1: `reticle stop` on a port whose `/status` names a bystander's pid refuses, naming the
//! port, and the bystander lives. Its scenario, judge and the judge's unit test.

use std::process::{Command, Stdio};
use std::time::Duration;

use harness::ports::pid_alive;
use harness::{OwnedDaemon, marker, poll};
use serde_json::json;

use super::{BOUND, call, observed};
use crate::history::{History, Op};
use crate::judge::{self, Judgement, RowOutcome};
use crate::rows::RowGate;
use crate::scenarios::kit::{control, controls_held, could_not_start, judged, observe, settle};
use crate::scenarios::{GateEnv, Ran};

/// A loopback HTTP server that answers every request with a `/status` naming `pid`.
async fn fake_status(pid: u32) -> Option<(u16, tokio::task::JoinHandle<()>)> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.ok()?;
    let port = listener.local_addr().ok()?.port();
    let body = json!({
        "running": true, "version": reticle::VERSION, "instance": "fake", "pid": pid,
        "port": port, "startedAt": "2020-01-01T00:00:00Z", "sessionCount": 0, "sessions": [],
    })
    .to_string();
    let task = tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let body = body.clone();
            tokio::spawn(async move {
                let mut buffer = [0u8; 2048];
                let _ = socket.read(&mut buffer).await;
                let answer = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(answer.as_bytes()).await;
            });
        }
    });
    Some((port, task))
}

/// S1: a server on a port answering `/status` with a bystander's pid: `reticle stop` on that port
/// must refuse, naming the port, and the bystander must live (control: `stop` still ends a real
/// daemon on its port).
pub async fn stop_signals_only_its_daemon(env: &GateEnv) -> Ran {
    const FAULT: &str = "status_names_a_bystander";
    let history = History::new();
    let Ok(state) = tempfile::tempdir() else {
        return could_not_start(history, FAULT, "no temporary dir");
    };
    let daemon = match OwnedDaemon::builder()
        .state_dir(state.path())
        .try_start()
        .await
    {
        Ok(daemon) => daemon,
        Err(why) => return could_not_start(history, FAULT, &why),
    };
    let own = daemon.port().to_string();
    let ran = call(
        &history,
        env,
        "stop_own",
        Some(state.path()),
        &["stop", "--port", &own],
        &[],
        &[],
    )
    .await;
    let pid = daemon.pid();
    let gone = poll::within(BOUND, async || (!pid_alive(pid)).then_some(()))
        .await
        .is_some();
    control(
        &history,
        "stop ends the real daemon on its port",
        ran.ok() && gone,
        json!({ "pid": pid, "gone": gone, "said": ran.said() }),
    );
    drop(daemon);
    let mut bystander_command = Command::new("sleep");
    bystander_command
        .arg("120")
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    marker::mark(&mut bystander_command);
    let Ok(mut bystander) = bystander_command.spawn() else {
        return could_not_start(history, FAULT, "could not start a bystander process");
    };
    let victim = bystander.id();
    let Some((port, server)) = fake_status(victim).await else {
        let _ = bystander.kill();
        return could_not_start(history, FAULT, "could not bind the fake /status server");
    };
    let answers = reticle::probe::fetch_status(port, Duration::from_secs(2))
        .await
        .is_some_and(|s| s.pid == victim);
    history.fault(FAULT, answers, json!({ "port": port, "bystander": victim }));
    let port_text = port.to_string();
    call(
        &history,
        env,
        "stop",
        Some(state.path()),
        &["stop", "--port", &port_text],
        &[],
        &[],
    )
    .await;
    let alive = matches!(bystander.try_wait(), Ok(None));
    observe(
        &history,
        "bystander",
        json!({ "pid": victim, "alive": alive }),
    );
    server.abort();
    let _ = bystander.kill();
    let _ = bystander.wait();
    judged(history, judge_stop)
}

/// S1's judge: a dead bystander is silent whatever `stop` said; otherwise `stop` must have failed
/// naming the port.
pub fn judge_stop(ops: &[Op]) -> Judgement {
    settle(|| {
        controls_held(ops)?;
        let fault = judge::established_fault(ops)?;
        if let Some(op) = observed(ops, "bystander")
            .into_iter()
            .find(|o| o.value["alive"] == false)
        {
            return Ok(Judgement::new(
                RowOutcome::Silent,
                format!(
                    "stop signalled pid {}, a bystander a fake /status named",
                    op.value["pid"]
                ),
            ));
        }
        let port = fault.value["port"].to_string();
        Ok(judge::must_surface(ops, "stop", &[&port]))
    })
}

/// S1 in the row table.
pub const S1: RowGate = RowGate {
    id: "S1",
    file: file!(),
    scenario: |env| Box::pin(stop_signals_only_its_daemon(env)),
    judge: judge_stop,
    controls: &[],
};

#[cfg(test)]
mod tests {
    //! Negative controls: each judge fed the history the old behaviour produced scores `silent`,
    //! and fed the fixed behaviour's history scores its target.
    use super::*;
    use crate::rows::security::test_history::{cli, fault};

    /// S1's history: `stop` answered `ok` saying `said`, and the bystander is then `alive`.
    fn stop_history(ok: bool, said: &str, alive: bool) -> Vec<Op> {
        let history = History::new();
        control(&history, "stop ends the real daemon", true, json!({}));
        let detail = json!({ "port": 4999, "bystander": 77 });
        fault(&history, "status_names_a_bystander", detail);
        cli(&history, "stop", ok, said);
        observe(&history, "bystander", json!({ "pid": 77, "alive": alive }));
        history.ops()
    }

    #[test]
    fn stop_that_kills_the_bystander_is_silent() {
        let old = stop_history(
            true,
            "stopped Reticle daemon pid 77 on 127.0.0.1:4999",
            false,
        );
        assert_eq!(judge_stop(&old).outcome, RowOutcome::Silent);
        let fixed = stop_history(false, "port 4999 names pid 77, not its listener", true);
        assert_eq!(judge_stop(&fixed).outcome, RowOutcome::Surfaced);
    }
}
