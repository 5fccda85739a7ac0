//! H1.4: stdin closed with calls in flight: every id answered exactly once before exit, and the
//! exit code says calls were still owed. Its scenario and judge.

use std::time::Duration;

use harness::{Stage, poll};
use reticle::mcp::jsonrpc::LostPopulation;
use reticle::proxy::events as proxy_events;
use serde_json::{Value, json};

use super::observed_value;
use crate::fault;
use crate::history::{Actor, History, Op, OpType};
use crate::judge::{self, Judgement, RowOutcome, one_line};
use crate::rows::RowGate;
use crate::scenarios::agent::{RawAgent, events};
use crate::scenarios::agent_kit::{answered_once_after_fault, judge_surfacing};
use crate::scenarios::kit::{BOUND, judged, observe, unestablished};
use crate::scenarios::{GateEnv, Ran, proxy_options};

/// H1.4: stdin closed with six calls in flight at the daemon: three that end inside the 5 s
/// drain and three that cannot. Every id must be answered exactly once before exit (results for
/// the first three, -32001 `owed_at_exit` for the rest, which the log lists), and the exit code
/// must say calls were still owed. Control: an idle proxy whose stdin closes exits 0 at once.
pub async fn stdin_closed_with_calls_in_flight(env: &GateEnv) -> Ran {
    let history = History::new();
    let Stage { state, port, _reap } = Stage::default();
    let options = proxy_options(env, port, state.path())
        .env(reticle::config::env::TEST_CATALOGUE, "+reticle_test_sleep");
    let mut raw = RawAgent::start(&history, options.clone());
    if raw.initialize(BOUND).await.is_none() {
        return unestablished(
            history,
            fault::CLOSE_STDIN,
            "initialize was not answered",
            judge_surfacing,
        );
    }
    let warm = raw.call_until_served(BOUND).await;
    let mut short = Vec::new();
    let mut long = Vec::new();
    if warm {
        for _ in 0..3 {
            short.push(
                raw.send(
                    "tools/call",
                    json!({"name": "reticle_test_sleep", "arguments": {"ms": 2000}}),
                )
                .await,
            );
            long.push(
                raw.send(
                    "tools/call",
                    json!({"name": "reticle_test_sleep", "arguments": {"ms": 120_000}}),
                )
                .await,
            );
        }
    }
    let in_flight = if warm {
        poll::within(BOUND, async || {
            let status = reticle::probe::fetch_status(port, Duration::from_millis(500)).await?;
            (status.calls_in_flight >= 6).then_some(status.calls_in_flight)
        })
        .await
    } else {
        None
    };
    raw.close_stdin();
    history.fault(
        fault::CLOSE_STDIN,
        in_flight.is_some(),
        json!({ "callsInFlightAtTheDaemon": in_flight, "ending": short, "endless": long }),
    );
    let exit = raw.wait_exit(BOUND).await;
    raw.settle();
    let code = exit.and_then(|s| s.code());
    let logged: Vec<Value> = events(&options, proxy_events::UNANSWERED_AT_EXIT)
        .first()
        .and_then(|e| e["ids"].as_array().cloned())
        .unwrap_or_default();
    observe(
        &history,
        PROXY_EXIT,
        json!({ "exited": exit.is_some(), "code": code, "loggedUnanswered": logged }),
    );

    // Control: nothing in flight, and closing stdin ends the proxy at once with 0.
    let mut idle = RawAgent::start(&History::new(), options);
    idle.initialize(BOUND).await;
    idle.close_stdin();
    let idle_code = idle.wait_exit(BOUND).await.and_then(|s| s.code());
    observe(&history, IDLE_EXIT, json!({ "code": idle_code }));
    judged(history, judge_stdin_closed)
}

/// The observation of how the proxy exited: `{"exited", "code", "loggedUnanswered"}`.
const PROXY_EXIT: &str = "proxy_exit";

/// The observation of the idle control's exit: `{"code"}`.
const IDLE_EXIT: &str = "control_idle_exit";

/// H1.4's judge: read from the history alone (the fault's ending and endless call ids, the
/// proxy's exit and the ids its log listed, the idle control's exit code).
pub fn judge_stdin_closed(ops: &[Op]) -> Judgement {
    if let Err(unproven) = answered_once_after_fault(ops) {
        return unproven;
    }
    let proxy_exit = observed_value(ops, PROXY_EXIT)
        .cloned()
        .unwrap_or(Value::Null);
    let code = proxy_exit["code"].as_i64();
    let idle_code = observed_value(ops, IDLE_EXIT).and_then(|v| v["code"].as_i64());
    let logged: Vec<Value> = proxy_exit["loggedUnanswered"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let ids = |key: &str| -> Vec<Value> {
        judge::established_fault(ops)
            .ok()
            .and_then(|f| f.value[key].as_array().cloned())
            .unwrap_or_default()
    };
    let (short, long) = (ids("ending"), ids("endless"));
    if proxy_exit["exited"] != true {
        return Judgement::new(
            RowOutcome::Silent,
            "the proxy never exited after stdin closed",
        );
    }
    if idle_code != Some(0) {
        return Judgement::new(
            RowOutcome::Inconclusive,
            format!("the idle control exited {idle_code:?}, so the exit code proves nothing"),
        );
    }
    let answer = |id: &Value| {
        ops.iter().find(|o| {
            o.actor == Actor::Client && o.op_type != OpType::Invoke && judge::call_id(o) == Some(id)
        })
    };
    for id in &short {
        match answer(id) {
            Some(op) if op.op_type == OpType::Ok => {}
            other => {
                return Judgement::new(
                    RowOutcome::Silent,
                    format!(
                        "call {id} should have finished inside the drain: {:?}",
                        other.map(|o| one_line(&judge::text(&o.value)))
                    ),
                );
            }
        }
    }
    for id in &long {
        match answer(id) {
            Some(op)
                if op.value["population"] == LostPopulation::OwedAtExit.as_str()
                    && logged.contains(id) => {}
            other => {
                return Judgement::new(
                    RowOutcome::Silent,
                    format!(
                        "call {id}, still owed at exit, was not answered -32001 owed_at_exit and logged: {:?} (logged {logged:?})",
                        other.map(|o| one_line(&judge::text(&o.value)))
                    ),
                );
            }
        }
    }
    if code != Some(1) {
        return Judgement::new(
            RowOutcome::Silent,
            format!("the proxy exited {code:?} although calls were still owed"),
        );
    }
    Judgement::new(
        RowOutcome::Surfaced,
        "stdin closed with 6 calls in flight: 3 finished in the drain, 3 answered -32001 owed_at_exit and logged; exit 1 (idle control: exit 0)",
    )
}

/// H1.4 in the row table.
pub const H1_4: RowGate = RowGate {
    id: "H1.4",
    file: file!(),
    scenario: |env| Box::pin(stdin_closed_with_calls_in_flight(env)),
    judge: judge_stdin_closed,
    controls: &[],
};
