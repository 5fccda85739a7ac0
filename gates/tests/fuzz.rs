//! The fuzz target: proptest over HTTP requests, MCP messages and bridge frames, each sent to a
//! real daemon (one per property). Every case must be answered within a bound (no hang), every
//! refusal must carry the one refusal body (`{"error", "status"}`) or, on the MCP stream, a
//! JSON-RPC error; after the run the daemon still answers and its resident memory grew within a
//! bound (no unbounded growth). A few hundred cases by default; `PROPTEST_CASES=<n>` runs more
//! (in a release run).

mod support;

use std::time::Duration;

use gates::scenarios::security::resident_kb;
use harness::OwnedDaemon;
use harness::wire_page::WirePage;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{Value, json};
use support::{SseReader, initialize_line};

/// How long one case's answer may take.
const ANSWER_BOUND: Duration = Duration::from_secs(5);
/// How much the daemon's resident memory may grow over one property's run.
const GROWTH_BOUND_KB: u64 = 64 * 1024;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}

fn runner() -> TestRunner {
    // `Config::default()` reads PROPTEST_CASES; the default here is a few hundred.
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(200);
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    })
}

/// The daemon still answers `/status`, and grew within the bound since `before_kb`.
async fn still_sound(daemon: &OwnedDaemon, before_kb: Option<u64>) {
    let status = reticle::probe::fetch_status(daemon.port(), ANSWER_BOUND).await;
    assert!(status.is_some(), "the daemon stopped answering /status");
    if let (Some(before), Some(after)) = (before_kb, resident_kb(daemon.pid())) {
        assert!(
            after.saturating_sub(before) <= GROWTH_BOUND_KB,
            "resident memory grew from {before} kB to {after} kB"
        );
    }
}

fn fail(why: String) -> TestCaseError {
    TestCaseError::fail(why)
}

/// Whether a refusal body is the one refusal body for `status`.
fn structured(status: u16, body: &str) -> bool {
    serde_json::from_str::<Value>(body)
        .is_ok_and(|v| v["error"].is_string() && v["status"] == status)
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

#[test]
fn http_requests_are_answered_and_refusals_structured() {
    let rt = runtime();
    let daemon = rt.block_on(OwnedDaemon::start());
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let before = resident_kb(daemon.pid());
    let port = daemon.port();
    runner()
        .run(&http_request(), |(method, path, origin, body)| {
            rt.block_on(async {
                let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
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
        })
        .unwrap();
    rt.block_on(still_sound(&daemon, before));
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
    let tool = prop::sample::select(vec!["reticle_sessions", "reticle_nope", ""]);
    (method, params, tool, any::<bool>()).prop_map(|(method, params, tool, named)| {
        let params = if method == "tools/call" && named {
            json!({ "name": tool, "arguments": params })
        } else {
            params
        };
        json!({ "jsonrpc": "2.0", "method": method, "params": params })
    })
}

#[test]
fn mcp_messages_are_answered_once_or_refused() {
    let rt = runtime();
    let daemon = rt.block_on(OwnedDaemon::start());
    let mut stream = rt.block_on(SseReader::open(daemon.port()));
    rt.block_on(async {
        assert_eq!(stream.post(&initialize_line(0)).await, 202);
        stream.next_message().await;
    });
    let before = resident_kb(daemon.pid());
    let mut next_id = 0u64;
    runner()
        .run(
            &(
                mcp_message(),
                any::<bool>(),
                prop::collection::vec(any::<u8>(), 0..64),
            ),
            |(mut message, as_request, garbage)| {
                next_id += 1;
                let id = format!("fuzz-{next_id}");
                if as_request {
                    message["id"] = json!(id);
                }
                rt.block_on(async {
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
                        let answer =
                            stream.message_within(ANSWER_BOUND).await.ok_or_else(|| {
                                fail(format!("{message}: no answer within the bound"))
                            })?;
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
        )
        .unwrap();
    rt.block_on(still_sound(&daemon, before));
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

#[test]
fn bridge_frames_never_stop_the_daemon() {
    let rt = runtime();
    let daemon = rt.block_on(OwnedDaemon::start());
    let token = daemon.try_token().expect("the daemon's token");
    let before = resident_kb(daemon.pid());
    let port = daemon.port();
    runner()
        .run(&prop::collection::vec(bridge_frame(), 1..8), |frames| {
            rt.block_on(async {
                let page = WirePage::open(port, Some("http://127.0.0.1:5173"))
                    .await
                    .map_err(|e| fail(format!("the socket did not open: {e:?}")))?;
                page.hello("fuzz", Some(&token)).await;
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
        })
        .unwrap();
    rt.block_on(still_sound(&daemon, before));
}
