//! H3.1: `serve` on a squatted port fails naming the port and the holder, never "started". Its
//! scenario and judge.

use std::net::TcpListener;

use serde_json::json;

use super::{call, fault_words, last_cli, said};
use crate::controls::StandIn;
use crate::fault;
use crate::history::{History, Op};
use crate::judge::{self, Judgement, RowOutcome, one_line};
use crate::rows::RowGate;
use crate::scenarios::kit::judged;
use crate::scenarios::{GateEnv, Ran};

/// H3.1: `serve` on a squatted port must fail naming the port and the holder, never "started".
pub async fn serve_on_a_squatted_port(env: &GateEnv) -> Ran {
    let history = History::new();
    let state = tempfile::tempdir().expect("state dir");
    let squatter = TcpListener::bind("127.0.0.1:0");
    let Ok(squatter) = squatter else {
        history.fault(
            fault::SQUAT_PORT,
            false,
            json!({ "reason": "could not bind a squatter" }),
        );
        return judged(history, judge_squatted_serve);
    };
    let port = squatter
        .local_addr()
        .map(|a| a.port())
        .unwrap_or(0)
        .to_string();
    history.fault(
        fault::SQUAT_PORT,
        true,
        json!({ "port": port, "holder": std::process::id() }),
    );
    call(&history, env, state.path(), &["serve", "--port", &port]).await;
    drop(squatter);
    judged(history, judge_squatted_serve)
}

/// H3.1's judge: `serve` never printed a started line, and failed naming the squatted port and
/// its holder (both as the fault recorded them).
pub fn judge_squatted_serve(ops: &[Op]) -> Judgement {
    if let Some(said) = last_cli(ops, "serve")
        .map(said)
        .filter(|said| said.contains("started"))
    {
        return Judgement::new(
            RowOutcome::Silent,
            format!("serve printed a started line: {}", one_line(&said)),
        );
    }
    let names = fault_words(ops, &["port", "holder"]);
    judge::must_surface(
        ops,
        "serve",
        &names.iter().map(String::as_str).collect::<Vec<_>>(),
    )
}

/// H3.1 in the row table.
pub const H3_1: RowGate = RowGate {
    id: "H3.1",
    file: file!(),
    scenario: |env| Box::pin(serve_on_a_squatted_port(env)),
    judge: judge_squatted_serve,
    controls: &[StandIn::Serve],
};
