//! S10: an MCP client pressing the daemon's endpoint past its limits, spoken to directly (no
//! proxy): a request id reused while its call runs, more calls than the call cap, more streams
//! than the session cap. The scenario records what each probe got back; the pure judge scores a
//! call left unanswered or a cap not held `silent`. Its unit tests feed it the old behaviour's
//! history (the negative control).

use std::time::Duration;

use harness::OwnedDaemon;
use harness::sse_stream::SseReader;
use reticle::config::env;
use serde_json::{Value, json};

use crate::history::{Actor, History, Op};
use crate::judge::{self, Judgement, RowOutcome};
use crate::rows::RowGate;
use crate::scenarios::kit::{
    control, controls_held, could_not_start, judged, observe, settle, worst,
};
use crate::scenarios::{GateEnv, Ran};

/// The caps the probed daemon runs with.
const SESSION_CAP: usize = 2;

const CALL_CAP: usize = 2;

/// How long a probe's calls sleep, and how long the scenario waits for their answers.
const CALL_MS: u64 = 1500;

const ANSWERS_BOUND: Duration = Duration::from_secs(8);

fn sleep_call(id: Value, ms: u64) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": "reticle_test_sleep", "arguments": { "ms": ms } } })
    .to_string()
}

fn initialize() -> String {
    json!({ "jsonrpc": "2.0", "id": "init", "method": "initialize",
        "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "gate", "version": "1" } } })
    .to_string()
}

/// Posts `bodies`, then gathers the stream's answers until `expected` arrived or the bound passed.
async fn answers(stream: &mut SseReader, bodies: &[String], expected: usize) -> Value {
    let mut posted = Vec::new();
    for body in bodies {
        posted.push(match stream.try_post(body).await {
            Ok((status, _)) => json!(status),
            Err(why) => json!(why),
        });
    }
    let mut got = Vec::new();
    let deadline = tokio::time::Instant::now() + ANSWERS_BOUND;
    while got.len() < expected {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        match stream.message_within(left).await {
            Some(message) => got.push(message),
            None => break,
        }
    }
    json!({ "posted": posted, "answers": got })
}

/// S10: on a daemon with a session cap of 2 and a call cap of 2, a duplicate in-flight id, a
/// third concurrent call and a third stream must each be refused naming the reason, and every
/// call that was started must still be answered (control: a stream opens and answers a call).
pub async fn mcp_endpoint_is_bounded(_env: &GateEnv) -> Ran {
    const FAULT: &str = "mcp_endpoint_pressure";
    let history = History::new();
    let builder = OwnedDaemon::builder()
        .env(env::TEST_CATALOGUE, "+reticle_test_sleep")
        .env(env::MAX_MCP_SESSIONS, SESSION_CAP.to_string())
        .env(env::MAX_MCP_CALLS, CALL_CAP.to_string());
    let daemon = match builder.try_start().await {
        Ok(daemon) => daemon,
        Err(why) => return could_not_start(history, FAULT, &why),
    };
    let mut stream = match SseReader::try_open(daemon.port()).await {
        Ok(stream) => stream,
        Err(why) => return could_not_start(history, FAULT, &why),
    };
    let warm = answers(
        &mut stream,
        &[initialize(), sleep_call(json!("warm"), 1)],
        2,
    )
    .await;
    let warmed = warm["answers"].as_array().is_some_and(|a| {
        a.iter()
            .any(|m| m["id"] == "warm" && m.get("result").is_some())
    });
    control(&history, "a stream opens and answers a call", warmed, warm);
    history.fault(
        FAULT,
        true,
        json!({ "sessionCap": SESSION_CAP, "callCap": CALL_CAP }),
    );
    let duplicate = [sleep_call(json!(7), CALL_MS), sleep_call(json!(7), 1)];
    observe(
        &history,
        "duplicate_id",
        answers(&mut stream, &duplicate, 2).await,
    );
    let over_cap = [
        sleep_call(json!("c1"), CALL_MS),
        sleep_call(json!("c2"), CALL_MS),
        sleep_call(json!("c3"), 1),
    ];
    observe(
        &history,
        "call_cap",
        answers(&mut stream, &over_cap, 3).await,
    );
    let second = SseReader::try_open(daemon.port()).await;
    let third = SseReader::try_open(daemon.port()).await;
    observe(
        &history,
        "session_cap",
        json!({ "second": second.as_ref().err(), "secondOpened": second.is_ok(),
            "thirdOpened": third.is_ok(), "third": third.as_ref().err() }),
    );
    drop((second, third, stream));
    daemon.shutdown().await;
    judged(history, judge_mcp_limits)
}

fn observed<'a>(ops: &'a [Op], f: &str) -> Option<&'a Value> {
    ops.iter()
        .find(|o| o.actor == Actor::Harness && o.f == f)
        .map(|o| &o.value)
}

fn answers_with<'a>(probe: &'a Value, id: &Value) -> Vec<&'a Value> {
    probe["answers"]
        .as_array()
        .map(|a| a.iter().filter(|m| &m["id"] == id).collect())
        .unwrap_or_default()
}

/// A refusal -32600 whose message names `names`.
fn refused_naming(message: &Value, names: &str) -> bool {
    message["error"]["code"] == -32600
        && message["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains(names))
}

fn judge_duplicate(probe: &Value) -> Judgement {
    let seven = answers_with(probe, &json!(7));
    let refused = seven.iter().any(|m| refused_naming(m, "already in use"));
    let answered = seven.iter().any(|m| m.get("result").is_some());
    match (refused, answered) {
        (true, true) => Judgement::new(
            RowOutcome::Surfaced,
            "a reused in-flight id was refused -32600 and the running call kept its answer",
        ),
        _ => Judgement::new(
            RowOutcome::Silent,
            format!(
                "a reused in-flight id: {} answer(s) for id 7, refused {refused}, the running call answered {answered}",
                seven.len()
            ),
        ),
    }
}

fn judge_call_cap(probe: &Value) -> Judgement {
    let started = ["c1", "c2"].iter().all(|id| {
        answers_with(probe, &json!(id))
            .iter()
            .any(|m| m.get("result").is_some())
    });
    let third = answers_with(probe, &json!("c3"));
    let refused = third.iter().any(|m| refused_naming(m, env::MAX_MCP_CALLS));
    if started && refused {
        Judgement::new(
            RowOutcome::Surfaced,
            format!(
                "a call past the cap of {CALL_CAP} was refused naming {}",
                env::MAX_MCP_CALLS
            ),
        )
    } else {
        Judgement::new(
            RowOutcome::Silent,
            format!(
                "calls past the cap: the first two answered {started}, the third got {}",
                Value::from(third.into_iter().cloned().collect::<Vec<_>>())
            ),
        )
    }
}

fn judge_session_cap(probe: &Value) -> Judgement {
    let refusal = probe["third"].as_str().unwrap_or("");
    if probe["secondOpened"] != true {
        return Judgement::new(
            RowOutcome::Inconclusive,
            format!(
                "a second stream, within the cap, did not open: {}",
                probe["second"]
            ),
        );
    }
    if probe["thirdOpened"] == false
        && refusal.starts_with("503")
        && refusal.contains(env::MAX_MCP_SESSIONS)
    {
        Judgement::new(
            RowOutcome::Surfaced,
            format!(
                "a stream past the cap of {SESSION_CAP} was refused 503 naming {}",
                env::MAX_MCP_SESSIONS
            ),
        )
    } else {
        Judgement::new(
            RowOutcome::Silent,
            format!(
                "a stream past the cap: opened {}, said {refusal:?}",
                probe["thirdOpened"]
            ),
        )
    }
}

/// S10's judge: the worst of the three probes'.
pub fn judge_mcp_limits(ops: &[Op]) -> Judgement {
    settle(|| {
        controls_held(ops)?;
        judge::established_fault(ops)?;
        let probe = |f: &str| {
            observed(ops, f).ok_or_else(|| {
                Judgement::new(
                    RowOutcome::Inconclusive,
                    format!("the {f} probe was not run"),
                )
            })
        };
        Ok(worst(vec![
            judge_duplicate(probe("duplicate_id")?),
            judge_call_cap(probe("call_cap")?),
            judge_session_cap(probe("session_cap")?),
        ]))
    })
}

/// S10 in the row table.
pub const S10: RowGate = RowGate {
    id: "S10",
    file: file!(),
    scenario: |env| Box::pin(mcp_endpoint_is_bounded(env)),
    judge: judge_mcp_limits,
    controls: &[],
};

#[cfg(test)]
mod tests {
    //! Negative control: the old endpoint's history (the reused id's first call never answered,
    //! no caps) scores `silent`; the fixed one `surfaced`.
    use super::*;

    fn result(id: Value) -> Value {
        json!({ "jsonrpc": "2.0", "id": id, "result": {} })
    }

    fn refusal(id: Value, message: &str) -> Value {
        json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32600, "message": message } })
    }

    fn history(fixed: bool) -> Vec<Op> {
        let history = History::new();
        control(&history, "a stream opens", true, json!({}));
        history.fault("mcp_endpoint_pressure", true, json!({}));
        let duplicate = if fixed {
            vec![
                refusal(json!(7), "request id 7 is already in use"),
                result(json!(7)),
            ]
        } else {
            vec![result(json!(7))]
        };
        observe(&history, "duplicate_id", json!({ "answers": duplicate }));
        let third = if fixed {
            refusal(
                json!("c3"),
                "too many tool calls running (RETICLE_MAX_MCP_CALLS)",
            )
        } else {
            result(json!("c3"))
        };
        let calls = vec![third, result(json!("c1")), result(json!("c2"))];
        observe(&history, "call_cap", json!({ "answers": calls }));
        let session = if fixed {
            json!({ "secondOpened": true, "thirdOpened": false, "third": "503 too many MCP sessions (RETICLE_MAX_MCP_SESSIONS)" })
        } else {
            json!({ "secondOpened": true, "thirdOpened": true })
        };
        observe(&history, "session_cap", session);
        history.ops()
    }

    #[test]
    fn an_unanswered_duplicate_or_an_unheld_cap_is_silent() {
        assert_eq!(
            judge_mcp_limits(&history(false)).outcome,
            RowOutcome::Silent
        );
        assert_eq!(
            judge_mcp_limits(&history(true)).outcome,
            RowOutcome::Surfaced
        );
    }
}
