//! H1.5: garbage on stdin is answered per JSON-RPC or ignored, and the proxy goes on serving.
//! Its scenario and judge.

use harness::Stage;
use harness::ports::pid_alive;
use serde_json::{Value, json};

use super::observed_value;
use crate::fault;
use crate::history::{Actor, History, Op, OpType};
use crate::judge::{self, Judgement, RowOutcome};
use crate::rows::RowGate;
use crate::scenarios::agent::RawAgent;
use crate::scenarios::agent_kit::judge_survival;
use crate::scenarios::kit::{BOUND, judged, observe, unestablished};
use crate::scenarios::{GateEnv, Ran, proxy_options};

/// H1.5: garbage on stdin (not JSON, a half object, 200 KB and 5 MB lines, a batch, a request
/// without a method, a blank line, control bytes) is answered per JSON-RPC or ignored, a valid
/// 200 KB request among it is served, and `tools/list` still answers afterwards.
pub async fn garbage_on_stdin(env: &GateEnv) -> Ran {
    let history = History::new();
    let Stage { state, port, _reap } = Stage::default();
    let mut raw = RawAgent::start(&history, proxy_options(env, port, state.path()));
    let listed = |answer: &Option<Value>| {
        answer.as_ref().is_some_and(|a| {
            a["result"]["tools"]
                .as_array()
                .is_some_and(|t| t.iter().any(|t| t["name"] == "reticle_sessions"))
        })
    };
    let control = if raw.initialize(BOUND).await.is_some() {
        raw.call("tools/list", json!({}), BOUND).await
    } else {
        None
    };
    if !listed(&control) {
        return unestablished(
            history,
            fault::GARBAGE,
            "tools/list was not served before the garbage",
            judge_survival,
        );
    }
    let big_ping = format!(
        r#"{{"jsonrpc":"2.0","id":78,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "y".repeat(200 * 1024)
    );
    let lines: Vec<(&str, String)> = vec![
        ("not JSON", "this is not json".into()),
        (
            "half an object",
            r#"{"jsonrpc":"2.0","id":77,"method":"tools/li"#.into(),
        ),
        ("a 200 KB non-JSON line", "x".repeat(200 * 1024)),
        ("a valid 200 KB ping", big_ping),
        ("a 5 MB line", "z".repeat(5 * 1024 * 1024)),
        ("a batch", "[]".into()),
        (
            "a request without a method",
            r#"{"jsonrpc":"2.0","id":79}"#.into(),
        ),
        ("a blank line", String::new()),
        ("control bytes", "\u{1}\u{2}\u{3}".into()),
    ];
    for (what, line) in &lines {
        if *what == "a valid 200 KB ping" {
            raw.expect_answer("ping", json!(78));
        }
        let ok = raw.write_line(line).await;
        history.fault(
            fault::GARBAGE,
            ok,
            json!({ "line": what, "bytes": line.len() }),
        );
        if !ok {
            break;
        }
    }
    let after = raw.call("tools/list", json!({}), BOUND).await;
    raw.answer(&json!(78), BOUND).await;
    raw.settle();
    let errors: Vec<(i64, Value)> = raw
        .received()
        .iter()
        .filter_map(|v| Some((v["error"]["code"].as_i64()?, v["id"].clone())))
        .collect();
    observe(
        &history,
        GARBAGE_ANSWERS,
        json!({ "errors": errors, "alive": pid_alive(raw.pid()), "lines": lines.len(), "listedAfter": listed(&after) }),
    );
    judged(history, judge_garbage)
}

/// The observation of what the proxy answered to the garbage, as counted on its stdout:
/// `{"errors": [[code, id]...], "alive", "lines", "listedAfter"}`.
const GARBAGE_ANSWERS: &str = "garbage_answers";

/// H1.5's judge, from the history alone: every garbage line taken (its fault recorded
/// established), the proxy alive, the errors it answered as counted, and `tools/list` listing
/// after (observed). A scenario that stopped before the garbage is judged by the survival judge.
pub fn judge_garbage(ops: &[Op]) -> Judgement {
    let Some(answers) = observed_value(ops, GARBAGE_ANSWERS) else {
        return judge_survival(ops);
    };
    if let Err(hang) = judge::exactly_once(ops) {
        return hang;
    }
    let total = answers["lines"].as_u64().unwrap_or(0);
    let written = ops
        .iter()
        .filter(|o| o.actor == Actor::Nemesis && o.f == fault::GARBAGE && o.op_type == OpType::Ok)
        .count() as u64;
    if written < total || answers["alive"] != true {
        return Judgement::new(
            RowOutcome::Silent,
            format!("the proxy died in the garbage ({written} of {total} lines taken)"),
        );
    }
    if answers["listedAfter"] != true {
        return Judgement::new(
            RowOutcome::Silent,
            "tools/list did not answer after the garbage",
        );
    }
    let errors: Vec<(i64, Value)> = answers["errors"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|pair| Some((pair[0].as_i64()?, pair[1].clone())))
        .collect();
    let count = |code: i64| errors.iter().filter(|(c, _)| *c == code).count();
    let echoed = errors.iter().any(|(_, id)| id == 79);
    if count(-32700) != 4 || count(-32600) != 3 || !echoed {
        return Judgement::new(
            RowOutcome::Silent,
            format!(
                "garbage was not answered per JSON-RPC: {} × -32700 (want 4), {} × -32600 (want 3), id 79 echoed: {echoed}",
                count(-32700),
                count(-32600)
            ),
        );
    }
    Judgement::new(
        RowOutcome::Survived,
        format!(
            "{total} garbage lines: 4 × -32700, 3 × -32600 (a readable id echoed), the rest ignored; the 200 KB ping and tools/list answered"
        ),
    )
}

/// H1.5 in the row table.
pub const H1_5: RowGate = RowGate {
    id: "H1.5",
    file: file!(),
    scenario: |env| Box::pin(garbage_on_stdin(env)),
    judge: judge_garbage,
    controls: &[],
};
