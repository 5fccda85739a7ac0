//! S11, the fuzz target: proptest over HTTP requests, MCP messages and bridge frames sent to a
//! real daemon. Every case answered within a bound, every refusal in the one refusal shape (or a
//! JSON-RPC error), every non-tool MCP request answered exactly once; afterwards the daemon still
//! answers and its memory grew within a bound. Control: the judge fed a failing property.

// The properties run on a blocking thread (the runner is synchronous) and drive the daemon
// through a runtime handle. `gates/tests/security_fuzz.rs` runs them with a few hundred cases (more with
// `PROPTEST_CASES`); the row runs [`ROW_CASES`] of each.

use std::time::Duration;

use harness::OwnedDaemon;
use harness::sse_stream::SseReader;
use harness::wire_page::WirePage;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{Value, json};
use tokio::runtime::Handle;

use crate::history::{Actor, History, Op};
use crate::judge::{self, Judgement, RowOutcome};
use crate::rows::RowGate;
use crate::scenarios::kit::{could_not_start, judged, observe, settle};
use crate::scenarios::memory::resident_kb;
use crate::scenarios::{GateEnv, Ran};

/// How long one case's answer may take.
pub const ANSWER_BOUND: Duration = Duration::from_secs(5);

/// How much the daemon's resident memory may grow over the properties' run.
pub const GROWTH_BOUND_KB: u64 = 64 * 1024;

/// Cases of each property the row runs.
pub const ROW_CASES: u32 = 64;

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    })
}

fn fail(why: String) -> TestCaseError {
    TestCaseError::fail(why)
}

/// A property's run: `Err` carries the minimal failing case.
fn outcome<T: std::fmt::Debug>(
    result: Result<(), proptest::test_runner::TestError<T>>,
) -> Result<(), String> {
    result.map_err(|e| e.to_string())
}

/// Whether a refusal body is the one refusal body for `status`.
pub fn structured(status: u16, body: &str) -> bool {
    serde_json::from_str::<Value>(body)
        .is_ok_and(|v| v["error"].is_string() && v["status"] == status)
}

/// The daemon's state after a run: whether `/status` answers and how much it grew.
pub async fn soundness(daemon: &OwnedDaemon, before_kb: Option<u64>) -> Value {
    let answers = reticle::probe::fetch_status(daemon.port(), ANSWER_BOUND)
        .await
        .is_some();
    let after_kb = resident_kb(daemon.pid());
    json!({ "answers": answers, "beforeKb": before_kb, "afterKb": after_kb, "boundKb": GROWTH_BOUND_KB })
}

/// Whether [`soundness`] found the daemon answering and within its growth bound.
pub fn sound(after: &Value) -> Result<(), String> {
    if after["answers"] != true {
        return Err("the daemon stopped answering /status".into());
    }
    let (Some(before), Some(now)) = (after["beforeKb"].as_u64(), after["afterKb"].as_u64()) else {
        return Ok(());
    };
    let grown = now.saturating_sub(before);
    if grown > GROWTH_BOUND_KB {
        return Err(format!(
            "resident memory grew {grown} kB (bound {GROWTH_BOUND_KB} kB)"
        ));
    }
    Ok(())
}

fn http_request() -> impl Strategy<Value = (String, String, Option<String>, Vec<u8>)> {
    let method = prop::sample::select(vec!["GET", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"]);
    let path = prop_oneof![
        prop::sample::select(vec![
            "/status",
            "/mcp/sse",
            "/mcp/message",
            "/mcp/message?sessionId=",
            "/reticle",
            "/bridge/commands",
            "/",
        ])
        .prop_map(str::to_string),
        "/[a-z%?=&./-]{0,40}",
        "/mcp/message\\?sessionId=[a-z0-9-]{0,40}",
        "/mcp/sse\\?agent=[a-zA-Z0-9%_-]{0,80}",
    ];
    let origin = prop::option::of(prop::sample::select(vec![
        "http://localhost:5173".to_string(),
        "https://evil.example".to_string(),
        "null".to_string(),
        "".to_string(),
    ]));
    let body = prop::collection::vec(any::<u8>(), 0..256);
    (method.prop_map(str::to_string), path, origin, body)
}

fn mcp_message() -> impl Strategy<Value = Value> {
    let method = prop::sample::select(vec![
        "initialize",
        "ping",
        "tools/list",
        "tools/call",
        "notifications/cancelled",
        "notifications/initialized",
        "resources/list",
        "",
    ]);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        "[a-z_ ]{0,12}".prop_map(Value::from),
    ];
    let params = leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::hash_map("[a-z]{1,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    });
    let tool = prop::sample::select(vec![
        "reticle_sessions",
        "reticle_flow_replay",
        "reticle_flow_heal",
        "reticle_replay",
        "reticle_verify",
        "reticle_run_export",
        "reticle_lease",
        "reticle_record",
        "reticle_flow_save_recorded",
        "reticle_nope",
        "",
    ]);
    (method, params, tool, any::<bool>()).prop_map(|(method, params, tool, named)| {
        let params = if method == "tools/call" && named {
            json!({ "name": tool, "arguments": params })
        } else {
            params
        };
        json!({ "jsonrpc": "2.0", "method": method, "params": params })
    })
}

fn bridge_frame() -> impl Strategy<Value = String> {
    let kind = prop::sample::select(
        reticle::wire::vocabulary::KnownEventType::ALL
            .iter()
            .map(|t| t.as_str())
            .chain(["hello", "result", "command", "nope"])
            .collect::<Vec<_>>(),
    );
    prop_oneof![
        ".{0,200}",
        (kind, "[a-z0-9 ]{0,20}", any::<i64>()).prop_map(|(kind, text, n)| {
            json!({ "type": kind, "sessionId": "fuzz", "id": n, "data": { "text": text, "n": n } })
                .to_string()
        }),
        (any::<i64>(), any::<bool>()).prop_map(|(n, ok)| {
            json!({ "type": "result", "id": n.to_string(), "ok": ok, "value": n }).to_string()
        }),
    ]
}

/// Property: every HTTP request to the daemon on `port` is answered, every refusal structured.
pub fn http_requests(handle: &Handle, port: u16, cases: u32) -> Result<(), String> {
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .map_err(|e| e.to_string())?;
    outcome(
        runner(cases).run(&http_request(), |(method, path, origin, body)| {
            handle.block_on(async {
                let method = reqwest::Method::from_bytes(method.as_bytes())
                    .map_err(|e| fail(format!("{method}: {e}")))?;
                let mut request = client
                    .request(method.clone(), format!("http://127.0.0.1:{port}{path}"))
                    .body(body);
                if let Some(origin) = &origin {
                    request = request.header("origin", origin);
                }
                let response = tokio::time::timeout(ANSWER_BOUND, request.send())
                    .await
                    .map_err(|_| fail(format!("{method} {path} was not answered")))?
                    .map_err(|e| fail(format!("{method} {path}: {e}")))?;
                let status = response.status().as_u16();
                if status >= 400 {
                    let body = tokio::time::timeout(ANSWER_BOUND, response.text())
                        .await
                        .map_err(|_| fail(format!("{method} {path}: the refusal never ended")))?
                        .unwrap_or_default();
                    prop_assert!(
                        structured(status, &body),
                        "{method} {path} (origin {origin:?}) refused {status} with {body:?}"
                    );
                }
                Ok(())
            })
        }),
    )
}

/// Property: every MCP message posted to an initialized session is taken (202) or refused with
/// the refusal body, and every request but a tool call is answered exactly once before a ping
/// sent behind it.
pub fn mcp_messages(handle: &Handle, stream: SseReader, cases: u32) -> Result<(), String> {
    // The runner takes a `Fn`: the stream and the id counter are shared through a lock and a cell.
    let stream = tokio::sync::Mutex::new(stream);
    let next_id = std::cell::Cell::new(0u64);
    outcome(runner(cases).run(
        &(
            mcp_message(),
            any::<bool>(),
            prop::collection::vec(any::<u8>(), 0..64),
        ),
        |(mut message, as_request, garbage)| {
            next_id.set(next_id.get() + 1);
            let id = format!("fuzz-{}", next_id.get());
            if as_request {
                message["id"] = json!(id);
            }
            handle.block_on(async {
                let mut stream = stream.lock().await;
                let (status, body) = stream
                    .try_post(&message.to_string())
                    .await
                    .map_err(|e| fail(format!("{message}: {e}")))?;
                prop_assert!(
                    status == 202 || structured(status, &body),
                    "{message}: {status} {body}"
                );
                // Raw bytes too: refused on the stream (a parse error), never a hang.
                let (status, body) = stream
                    .try_post(&String::from_utf8_lossy(&garbage))
                    .await
                    .map_err(|e| fail(format!("garbage: {e}")))?;
                prop_assert!(
                    status == 202 || structured(status, &body),
                    "garbage: {status} {body}"
                );
                // Every request is answered exactly once, with its id, before a ping behind it.
                let ping =
                    json!({ "jsonrpc": "2.0", "id": format!("{id}-ping"), "method": "ping" });
                stream.try_post(&ping.to_string()).await.map_err(fail)?;
                let mut answers_for_id = 0;
                loop {
                    let answer = stream
                        .message_within(ANSWER_BOUND)
                        .await
                        .ok_or_else(|| fail(format!("{message}: no answer within the bound")))?;
                    if let Some(code) = answer["error"]["code"].as_i64() {
                        prop_assert!(answer["error"]["message"].is_string(), "{answer}");
                        prop_assert!(code < 0, "{answer}");
                    }
                    if answer["id"] == json!(id) {
                        answers_for_id += 1;
                    }
                    if answer["id"] == ping["id"] {
                        break;
                    }
                }
                let method = message["method"].as_str().unwrap_or("");
                // A tools/call runs on its own task, so its answer may come after the ping's.
                if as_request && method != "tools/call" {
                    prop_assert_eq!(answers_for_id, 1, "{}", message);
                }
                prop_assert!(answers_for_id <= 1, "{}", message);
                Ok(())
            })
        },
    ))
}

/// Property: any burst of frames after a hello, on a fresh socket each case, leaves the daemon
/// answering `/status`.
pub fn bridge_frames(handle: &Handle, port: u16, token: &str, cases: u32) -> Result<(), String> {
    outcome(
        runner(cases).run(&prop::collection::vec(bridge_frame(), 1..8), |frames| {
            handle.block_on(async {
                let page = WirePage::open(port, Some("http://127.0.0.1:5173"))
                    .await
                    .map_err(|e| fail(format!("the socket did not open: {e:?}")))?;
                page.hello("fuzz", Some(token)).await;
                for frame in frames {
                    if !page.send_text(frame).await {
                        break;
                    }
                }
                page.close().await;
                let status = reticle::probe::fetch_status(port, ANSWER_BOUND).await;
                prop_assert!(status.is_some(), "the daemon stopped answering");
                Ok(())
            })
        }),
    )
}

/// Runs the three properties with `cases` each against `daemon` (on a blocking thread), recording
/// each property's result and then the daemon's soundness.
pub async fn run_properties(history: &History, daemon: &OwnedDaemon, cases: u32) {
    let handle = Handle::current();
    let port = daemon.port();
    let token = daemon.try_token().unwrap_or_default();
    let before = resident_kb(daemon.pid());
    let stream = match SseReader::try_open(port).await {
        Ok(stream) => initialized(stream).await,
        Err(why) => Err(why),
    };
    let results = tokio::task::spawn_blocking(move || {
        let mcp = stream.and_then(|stream| mcp_messages(&handle, stream, cases));
        [
            ("http_requests", http_requests(&handle, port, cases)),
            ("mcp_messages", mcp),
            ("bridge_frames", bridge_frames(&handle, port, &token, cases)),
        ]
    })
    .await;
    match results {
        Ok(results) => {
            for (name, result) in results {
                observe(
                    history,
                    "property",
                    json!({ "name": name, "cases": cases, "failed": result.err() }),
                );
            }
        }
        Err(panicked) => observe(
            history,
            "property",
            json!({ "name": "all", "failed": format!("the properties panicked: {panicked}") }),
        ),
    }
    observe(history, "after", soundness(daemon, before).await);
}

/// `stream` after its `initialize` was answered.
async fn initialized(mut stream: SseReader) -> Result<SseReader, String> {
    let init = json!({ "jsonrpc": "2.0", "id": "init", "method": "initialize",
        "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "fuzz", "version": "1" } } });
    stream.try_post(&init.to_string()).await?;
    stream
        .message_within(ANSWER_BOUND)
        .await
        .ok_or("initialize was not answered")?;
    Ok(stream)
}

/// S11: [`ROW_CASES`] cases of each property against one daemon.
pub async fn fuzz_holds(_env: &GateEnv) -> Ran {
    const FAULT: &str = "fuzzed_inputs";
    let history = History::new();
    let daemon = match OwnedDaemon::builder().try_start().await {
        Ok(daemon) => daemon,
        Err(why) => return could_not_start(history, FAULT, &why),
    };
    history.fault(FAULT, true, json!({ "cases": ROW_CASES }));
    run_properties(&history, &daemon, ROW_CASES).await;
    daemon.shutdown().await;
    judged(history, judge_fuzz)
}

/// S11's judge: a failing property or an unsound daemon is silent (a panic, a hang, an
/// unstructured refusal or growth nobody reports); every property holding over a sound daemon
/// survived.
pub fn judge_fuzz(ops: &[Op]) -> Judgement {
    settle(|| {
        judge::established_fault(ops)?;
        let seen = |f: &'static str| {
            ops.iter()
                .filter(move |o| o.actor == Actor::Harness && o.f == f)
        };
        for property in seen("property") {
            if let Some(failed) = property.value["failed"].as_str() {
                return Ok(Judgement::new(
                    RowOutcome::Silent,
                    format!(
                        "{}: {failed}",
                        property.value["name"].as_str().unwrap_or("?")
                    ),
                ));
            }
        }
        let Some(after) = seen("after").next() else {
            return Err(Judgement::new(
                RowOutcome::Inconclusive,
                "the daemon was not checked after the run",
            ));
        };
        if let Err(why) = sound(&after.value) {
            return Ok(Judgement::new(RowOutcome::Silent, why));
        }
        let properties = seen("property").count();
        if properties < 3 {
            return Err(Judgement::new(
                RowOutcome::Inconclusive,
                format!("{properties} of 3 properties ran"),
            ));
        }
        Ok(Judgement::new(
            RowOutcome::Survived,
            "HTTP requests, MCP messages and bridge frames: every case answered, every refusal structured, the daemon sound",
        ))
    })
}

/// S11 in the row table.
pub const S11: RowGate = RowGate {
    id: "S11",
    file: file!(),
    scenario: |env| Box::pin(fuzz_holds(env)),
    judge: judge_fuzz,
    controls: &[],
};

#[cfg(test)]
mod tests {
    //! Negative control: a property that found a case (the old router's plain-text 405) or a
    //! daemon that grew past the bound scores `silent`.
    use super::*;

    fn history(failed: Option<&str>, after_kb: u64) -> Vec<Op> {
        let history = History::new();
        history.fault("fuzzed_inputs", true, json!({}));
        for name in ["http_requests", "mcp_messages", "bridge_frames"] {
            let failed = if name == "http_requests" {
                failed
            } else {
                None
            };
            observe(
                &history,
                "property",
                json!({ "name": name, "failed": failed }),
            );
        }
        observe(
            &history,
            "after",
            json!({ "answers": true, "beforeKb": 10_000, "afterKb": after_kb }),
        );
        history.ops()
    }

    #[test]
    fn a_failing_property_or_unbounded_growth_is_silent() {
        let old = history(Some(r#"PUT /mcp/message refused 405 with """#), 12_000);
        assert_eq!(judge_fuzz(&old).outcome, RowOutcome::Silent);
        let grown = history(None, 10_000 + GROWTH_BOUND_KB + 1);
        assert_eq!(judge_fuzz(&grown).outcome, RowOutcome::Silent);
        let fixed = history(None, 12_000);
        assert_eq!(judge_fuzz(&fixed).outcome, RowOutcome::Survived);
    }

    #[test]
    fn refusal_bodies_are_recognised() {
        assert!(structured(403, r#"{"error":"no","status":403}"#));
        assert!(!structured(405, ""));
        assert!(!structured(403, r#"{"error":"no","status":404}"#));
    }
}
