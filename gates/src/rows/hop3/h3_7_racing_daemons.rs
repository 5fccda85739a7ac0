//! H3.7: two daemons racing for one port: exactly one runs, the other exits non-zero naming it.
//! Its scenario and judge.

use std::process::Stdio;

use harness::cli::{self};
use harness::ports::listeners;
use harness::{free_port, poll};
use serde_json::{Value, json};

use super::{BOUND, last_cli};
use crate::fault;
use crate::history::{History, Op, OpType};
use crate::judge::{self, Judgement, RowOutcome};
use crate::rows::RowGate;
use crate::scenarios::kit::judged;
use crate::scenarios::{GateEnv, Ran};

/// H3.7: two daemons racing for one port: exactly one runs, the other exits non-zero naming it.
pub async fn racing_daemons(env: &GateEnv) -> Ran {
    let history = History::new();
    let state = tempfile::tempdir().expect("state dir");
    let port = free_port().to_string();
    let spawn = || {
        let mut command = cli::command_with(
            &env.reticle,
            state.path(),
            &["serve", "--foreground", "--port", &port],
        );
        command
            .env(reticle::config::env::IDLE_SHUTDOWN_MS, "0")
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        command.spawn()
    };
    let (Ok(mut a), Ok(mut b)) = (spawn(), spawn()) else {
        history.fault(
            fault::RACE_TWO_DAEMONS,
            false,
            json!({ "reason": "could not spawn both" }),
        );
        return judged(history, judge_race);
    };
    history.fault(
        fault::RACE_TWO_DAEMONS,
        true,
        json!({ "port": port, "pids": [a.id(), b.id()] }),
    );
    history.invoke("serve", json!({ "racers": 2 }));
    let (a_pid, b_pid) = (a.id(), b.id());
    let loser = poll::within(BOUND, async || {
        for (me, other) in [(&mut a, b_pid), (&mut b, a_pid)] {
            if let Ok(Some(code)) = me.try_wait() {
                let mut stderr = String::new();
                if let Some(mut pipe) = me.stderr.take() {
                    use std::io::Read;
                    let _ = pipe.read_to_string(&mut stderr);
                }
                return Some((code, stderr, other));
            }
        }
        None
    })
    .await;
    // The loser exits as soon as it finds the port's lock taken, and the winner takes the lock
    // before it binds: on a loaded machine the winner may not listen yet. Wait (bounded) for it.
    let port_number = port.parse().unwrap_or(0);
    let listening = poll::within(BOUND, async || {
        let count = listeners(port_number).len();
        (count == 1).then_some(count)
    })
    .await
    .unwrap_or_else(|| listeners(port_number).len());
    match &loser {
        Some((code, stderr, winner)) => {
            let op = if code.success() {
                OpType::Ok
            } else {
                OpType::Fail
            };
            history.complete(op, "serve", json!({ "code": code.code(), "stderr": stderr, "winner": winner, "listeners": listening }));
        }
        None => {
            history.complete(
                OpType::Info,
                "serve",
                json!({ "message": "neither racer exited", "listeners": listening }),
            );
        }
    }
    for child in [&mut a, &mut b] {
        let _ = child.kill();
        let _ = child.wait();
    }
    judged(history, judge_race)
}

/// H3.7's judge: one daemon listened once the race was over, and the loser's `serve` failed
/// naming the winner (both as its completion recorded them).
pub fn judge_race(ops: &[Op]) -> Judgement {
    if let Err(unproven) = judge::established_fault(ops) {
        return unproven;
    }
    let done = last_cli(ops, "serve");
    let listening = done
        .and_then(|o| o.value["listeners"].as_u64())
        .unwrap_or(0);
    if listening != 1 {
        return Judgement::new(
            RowOutcome::Silent,
            format!("{listening} daemons listen on the port"),
        );
    }
    let winner = done
        .map(|o| &o.value["winner"])
        .filter(|w| !w.is_null())
        .map(Value::to_string)
        .unwrap_or_default();
    judge::must_surface(ops, "serve", &[&winner])
}

/// H3.7 in the row table.
pub const H3_7: RowGate = RowGate {
    id: "H3.7",
    file: file!(),
    scenario: |env| Box::pin(racing_daemons(env)),
    judge: judge_race,
    controls: &[],
};
