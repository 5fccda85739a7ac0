//! The daemon's MCP endpoint, spoken to directly (no proxy): the stream opens with its endpoint,
//! answers arrive as `message` events, JSON-RPC 2.0 holds exactly, a fresh session refuses calls
//! before `initialize` (the control for H2.6), the catalogue's version and hash are in `/status`,
//! a planned shutdown is announced on the stream, and idle shutdown never fires while a stream
//! is attached (control: it fires once none is). A client that stops reading its stream: a POST
//! once its backlog is full is refused 503 naming the cap (control: a read stream never is), and
//! an answer waiting for room is dropped after its bound, freeing its call's slot (control: the
//! slot was held meanwhile). A POST that asks for its answer inline (as `reticle mcp` does) gets
//! it as its own response and the stream does not carry it (control: with the inline wait at
//! zero, the same POST gets 202 and the answer on the stream). A call its client cancels is
//! stopped and never answered: its POST ends 202 with no body (control: the next call is). A
//! batch is answered as one array on a 2025-03-26 session and refused on a later one.

mod support;

use std::time::Duration;

use harness::mcp_client::{ProxyOptions, RawMcp};
use harness::sse_stream::SseReader;
use harness::streamable_client::StreamableClient;
use harness::{OwnedDaemon, poll};
use nix::sys::signal::Signal;
use reticle::config::{MCP_STREAM_BACKLOG, env};
use reticle::mcp::{INLINE_ANSWER, INLINE_ANSWER_HEADER};
use serde_json::{Value, json};
use support::{BOUND, initialize_line};

#[tokio::test]
async fn a_stream_serves_a_fresh_session_with_json_rpc_exactly() {
    let daemon = OwnedDaemon::start().await;
    let mut stream = SseReader::open(daemon.port()).await;
    let (event, data) = stream.next_event().await.unwrap();
    assert_eq!(event, "reticle-session");
    let info: Value = serde_json::from_str(&data).unwrap();
    assert_eq!(info["instance"], daemon.instance());

    // Before initialize, a call is refused (this is what handshake replay must prevent).
    let call = json!({"jsonrpc":"2.0","id":"early","method":"tools/call","params":{"name":"reticle_sessions","arguments":{}}}).to_string();
    assert_eq!(stream.post(&call).await, 202);
    let refused = stream.next_message().await;
    assert_eq!(refused["id"], "early");
    assert_eq!(refused["error"]["code"], -32600);
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("initialize")
    );
    let log = std::fs::read_to_string(daemon.log_path()).unwrap();
    assert!(log.contains("mcp_call_refused"), "the refusal is logged");

    assert_eq!(stream.post(&initialize_line(1)).await, 202);
    let init = stream.next_message().await;
    assert_eq!(init["id"], 1);
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(init["result"]["serverInfo"]["name"], "reticle");
    let instructions = init["result"]["instructions"].as_str().unwrap();
    assert!(instructions.contains("reticle_act_and_wait") && instructions.contains("not a pass"));
    stream
        .post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;

    let cases = [
        ("{\"jsonrpc\":\"2.0\",\"id\":2,\"meth", -32700, Value::Null),
        (
            r#"[{"jsonrpc":"2.0","id":3,"method":"ping"}]"#,
            -32600,
            Value::Null,
        ),
        (
            r#"{"jsonrpc":"2.0","id":4,"method":"resources/list"}"#,
            -32601,
            json!(4),
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope"}}"#,
            -32602,
            json!(5),
        ),
    ];
    for (body, code, id) in cases {
        assert_eq!(stream.post(body).await, 202);
        let answer = stream.next_message().await;
        assert_eq!(answer["error"]["code"], code, "{body} -> {answer}");
        assert_eq!(answer["id"], id, "{body}");
    }
    assert_eq!(
        stream
            .post(r#"{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"reticle_sessions","arguments":{}}}"#)
            .await,
        202
    );
    let sessions = stream.next_message().await;
    assert_eq!(sessions["id"], "s", "ids are echoed as sent");
    assert_eq!(
        sessions["result"]["structuredContent"]["sessions"],
        json!([])
    );
    assert!(sessions["result"]["structuredContent"]["why"].is_string());

    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let unknown = client
        .post(format!(
            "http://127.0.0.1:{}/mcp/message?sessionId=nope",
            daemon.port()
        ))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 404);
    let missing = client
        .post(format!("http://127.0.0.1:{}/mcp/message", daemon.port()))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 400);
}

/// One POST asking for its answer inline: its status and the answer it carried, if any.
async fn post_inline(stream: &SseReader, body: &str) -> (u16, Option<Value>) {
    let (status, text) = stream
        .try_post_with(body, &[(INLINE_ANSWER_HEADER, INLINE_ANSWER)])
        .await
        .unwrap();
    (status, serde_json::from_str(&text).ok())
}

#[tokio::test]
async fn an_answer_asked_for_inline_comes_back_on_its_post_and_only_there() {
    let call = r#"{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"reticle_sessions","arguments":{}}}"#;
    let ping = r#"{"jsonrpc":"2.0","id":"last","method":"ping"}"#;
    // A long wait, so the tool call's answer (from its own task) comes back inline however
    // slow the machine; initialize is answered before its POST returns under any wait.
    let daemon = OwnedDaemon::builder()
        .env(env::MCP_INLINE_WAIT_MS, "60000")
        .start()
        .await;
    let mut stream = SseReader::open(daemon.port()).await;
    assert_eq!(stream.next_event().await.unwrap().0, "reticle-session");
    let (status, init) = post_inline(&stream, &initialize_line(1)).await;
    assert_eq!(status, 200);
    assert_eq!(init.unwrap()["result"]["protocolVersion"], "2025-06-18");
    let (status, sessions) = post_inline(&stream, call).await;
    assert_eq!(status, 200);
    let sessions = sessions.unwrap();
    assert_eq!(sessions["id"], "s");
    assert_eq!(
        sessions["result"]["structuredContent"]["sessions"],
        json!([])
    );
    // A notification has no answer to carry; a POST that does not ask gets 202 and the stream.
    let (status, nothing) = post_inline(
        &stream,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .await;
    assert_eq!((status, nothing), (202, None));
    assert_eq!(stream.post(ping).await, 202);
    let first_on_stream = stream.next_message().await;
    assert_eq!(
        first_on_stream["id"], "last",
        "the stream carried only the answer nobody asked for inline: {first_on_stream}"
    );

    // Control: no inline wait, so the same POSTs are answered on the stream.
    let daemon = OwnedDaemon::builder()
        .env(env::MCP_INLINE_WAIT_MS, "0")
        .start()
        .await;
    let mut stream = SseReader::open(daemon.port()).await;
    assert_eq!(stream.next_event().await.unwrap().0, "reticle-session");
    assert_eq!(post_inline(&stream, &initialize_line(1)).await, (202, None));
    assert_eq!(stream.next_message().await["id"], 1);
    assert_eq!(post_inline(&stream, call).await, (202, None));
    assert_eq!(stream.next_message().await["id"], "s");
}

#[tokio::test]
async fn status_reports_the_catalogue_and_a_test_edit_changes_its_hash() {
    let standard = OwnedDaemon::start().await;
    let edited = OwnedDaemon::builder()
        .env("RETICLE_TEST_CATALOGUE", "+reticle_test_echo")
        .start()
        .await;
    let a = standard.status().await.unwrap().catalogue.unwrap();
    let b = edited.status().await.unwrap().catalogue.unwrap();
    assert_eq!(a.version, b.version);
    assert_ne!(a.hash, b.hash);
    assert_eq!(b.tools, a.tools + 1, "the edit adds one advertised tool");
    // Control: the same catalogue hashes the same in another daemon life.
    let again = OwnedDaemon::start().await;
    assert_eq!(
        again.status().await.unwrap().catalogue.unwrap().hash,
        a.hash
    );
}

#[tokio::test]
async fn a_planned_shutdown_is_announced_on_every_stream_before_it_ends() {
    let mut daemon = OwnedDaemon::start().await;
    let mut stream = SseReader::open(daemon.port()).await;
    stream.next_event().await.unwrap();
    daemon.signal(Signal::SIGTERM);
    let (event, data) = tokio::time::timeout(BOUND, stream.next_event())
        .await
        .unwrap()
        .expect("a notice before the end");
    assert_eq!(event, "reticle-shutdown");
    assert!(data.contains("shutting down"));
    let end = tokio::time::timeout(BOUND, stream.next_event())
        .await
        .unwrap();
    assert!(end.is_none(), "the stream ends after the notice");
    poll::until("the daemon to exit", BOUND, async || {
        daemon.has_exited().then_some(())
    })
    .await;
}

#[tokio::test]
async fn idle_shutdown_never_fires_while_a_stream_is_attached_and_fires_once_none_is() {
    let mut daemon = OwnedDaemon::builder()
        .env("RETICLE_IDLE_SHUTDOWN_MS", "300")
        .env("RETICLE_HEARTBEAT_MS", "30")
        .start()
        .await;
    let stream = SseReader::open(daemon.port()).await;
    assert_eq!(daemon.status().await.unwrap().agent_count, 1);
    let beats = |text: String| text.matches("daemon_alive").count();
    let log = daemon.log_path();
    let before = beats(std::fs::read_to_string(&log).unwrap());
    // 40 heartbeats at 30 ms is four times the idle bound.
    poll::until("forty heartbeats while attached", BOUND, async || {
        (beats(std::fs::read_to_string(&log).unwrap()) >= before + 40).then_some(())
    })
    .await;
    assert!(
        !daemon.has_exited(),
        "an attached stream must hold off idle shutdown"
    );
    assert!(daemon.status().await.is_some());
    // Control: detach, and the idle bound ends the daemon.
    drop(stream);
    poll::until("idle shutdown once detached", BOUND, async || {
        daemon.has_exited().then_some(())
    })
    .await;
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("daemon_idle"), "{text}");
}

/// The raw page-command routes (`/bridge/*`) are a harness surface: a daemon started as users
/// start it does not mount them, so an agent's only path to a page is a tool call. Control: the
/// harness's daemon (`RETICLE_HARNESS_ROUTES=1`) serves them.
#[tokio::test]
async fn the_raw_bridge_routes_exist_only_for_the_harness() {
    let plain = OwnedDaemon::builder()
        .env("RETICLE_HARNESS_ROUTES", "0")
        .start()
        .await;
    let harnessed = OwnedDaemon::start().await;
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let sessions = async |port: u16| {
        client
            .get(format!("http://127.0.0.1:{port}/bridge/sessions"))
            .send()
            .await
            .unwrap()
    };
    let refused = sessions(plain.port()).await;
    assert_eq!(refused.status(), 404);
    let body: serde_json::Value = refused.json().await.unwrap();
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("RETICLE_HARNESS_ROUTES=1"),
        "{body}"
    );
    let commands = client
        .post(format!("http://127.0.0.1:{}/bridge/commands", plain.port()))
        .json(&json!({"name": "query", "args": {}}))
        .send()
        .await
        .unwrap();
    assert_eq!(commands.status(), 404);
    assert_eq!(sessions(harnessed.port()).await.status(), 200);
}

fn tools_list(id: usize) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}).to_string()
}

fn sleep_call(id: &str, ms: u64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "reticle_test_sleep", "arguments": {"ms": ms}}})
    .to_string()
}

/// An initialized stream.
async fn initialized(port: u16) -> SseReader {
    let mut stream = SseReader::open(port).await;
    assert_eq!(stream.post(&initialize_line(1)).await, 202);
    assert_eq!(stream.next_message().await["id"], 1);
    stream
}

/// Posts `tools/list` (a large answer) to a stream nobody reads, sixteen at a time, until a
/// POST is refused; the number accepted and the first refusal's status and body. Panics when
/// none is refused within four backlogs' worth (the socket buffers hold the rest).
async fn post_until_refused(stream: &SseReader) -> (usize, u16, Value) {
    const AT_ONCE: usize = 16;
    let mut accepted = 0;
    for batch in 0..(MCP_STREAM_BACKLOG * 4 / AT_ONCE) {
        let bodies: Vec<String> = (0..AT_ONCE)
            .map(|i| tools_list(100 + batch * AT_ONCE + i))
            .collect();
        let answers =
            futures_util::future::join_all(bodies.iter().map(|b| stream.try_post(b))).await;
        let mut refused = None;
        for (status, body) in answers.into_iter().map(Result::unwrap) {
            if status == 202 {
                accepted += 1;
            } else if refused.is_none() {
                refused = Some((status, serde_json::from_str(&body).unwrap_or(Value::Null)));
            }
        }
        if let Some((status, body)) = refused {
            return (accepted, status, body);
        }
    }
    panic!("no POST refused after {accepted} unread answers");
}

#[tokio::test]
async fn a_post_to_a_stream_whose_backlog_is_full_is_refused_naming_the_cap() {
    let daemon = OwnedDaemon::start().await;
    let mut stream = initialized(daemon.port()).await;
    // Control: while the stream is read, every POST is accepted and answered.
    for id in 0..(MCP_STREAM_BACKLOG / 8) {
        assert_eq!(stream.post(&tools_list(id + 2)).await, 202);
        assert_eq!(stream.next_message().await["id"], id + 2);
    }
    // The client stops reading.
    let (accepted, status, body) = post_until_refused(&stream).await;
    assert_eq!(status, 503, "{body}");
    assert!(
        accepted >= MCP_STREAM_BACKLOG,
        "refused after only {accepted} unread answers"
    );
    assert_eq!(body["status"], 503, "{body}");
    let sentence = body["error"].as_str().unwrap_or_default();
    assert!(
        sentence.contains("backlog cap") && sentence.contains(&MCP_STREAM_BACKLOG.to_string()),
        "{sentence}"
    );
    // Reading again makes room: the stream still holds a full backlog of answers, and a POST is
    // accepted once they are read. Only the backlog is certain to be there: an answer to a POST
    // accepted while the last slots were taken waits for room, and is dropped after its own
    // bound (MCP_STREAM_WAIT) when filling the backlog took longer than that (a loaded machine).
    for _ in 0..MCP_STREAM_BACKLOG {
        stream.next_message().await;
    }
    assert_eq!(stream.post(&tools_list(1)).await, 202);
}

#[tokio::test]
async fn an_answer_waiting_for_room_on_an_unread_stream_is_dropped_after_its_bound() {
    let daemon = OwnedDaemon::builder()
        .env(env::TEST_CATALOGUE, "+reticle_test_sleep")
        .env(env::MAX_MCP_CALLS, "1")
        .start()
        .await;
    let stalled = initialized(daemon.port()).await;
    // The only call slot: a call whose answer will find its stream full.
    assert_eq!(stalled.post(&sleep_call("held", 15_000)).await, 202);
    let (_, status, body) = post_until_refused(&stalled).await;
    assert_eq!(status, 503, "{body}");
    let mut other = initialized(daemon.port()).await;
    // Control: meanwhile the slot is held, so another client's call is refused naming the cap.
    assert_eq!(other.post(&sleep_call("early", 1)).await, 202);
    let early = other.next_message().await;
    assert_eq!(early["id"], "early");
    assert!(
        early["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains(env::MAX_MCP_CALLS)),
        "{early}"
    );
    // Once the held call's answer has waited its bound for room and been dropped, the slot is
    // free: another client's call runs and is answered (unbounded, it would wait forever).
    let mut attempt = 0;
    poll::until(
        "a call answered once the held one's answer is dropped",
        BOUND * 2,
        async || {
            attempt += 1;
            let id = format!("after-{attempt}");
            assert_eq!(other.post(&sleep_call(&id, 1)).await, 202);
            let answer = other.next_message().await;
            assert_eq!(answer["id"], id.as_str());
            answer.get("result").map(|_| ())
        },
    )
    .await;
}

/// A daemon whose MCP session cap is full refuses the proxy's stream 503 with a sentence naming
/// the cap; the proxy's -32001 passes that sentence on instead of the bare status, and `reticle
/// doctor` names the full cap as an obstacle (control: not before the cap fills; once the stream
/// holding the cap ends, the proxy's next call is answered).
#[tokio::test]
async fn a_proxy_refused_by_a_full_session_cap_names_the_cap() {
    let daemon = OwnedDaemon::builder()
        .env(env::MAX_MCP_SESSIONS, "1")
        .start()
        .await;
    let port = daemon.port().to_string();
    let doctor_state = tempfile::tempdir().unwrap();
    let doctor =
        async || harness::cli::run(doctor_state.path(), &["doctor", "--port", &port]).await;
    let before = doctor().await;
    assert!(!before.stdout.contains(env::MAX_MCP_SESSIONS), "{before:?}");
    let holder = SseReader::try_open(daemon.port())
        .await
        .expect("the one stream the cap allows opens");
    let full = doctor().await;
    assert_eq!(full.code, Some(1), "{full:?}");
    assert!(full.stdout.contains(env::MAX_MCP_SESSIONS), "{full:?}");
    let state = tempfile::tempdir().unwrap();
    let options = ProxyOptions::new(daemon.port(), state.path())
        .env(env::QUEUE_WAIT_MS, "1500")
        .env(env::RECONNECT_ATTEMPTS, "1");
    let mut agent = RawMcp::start(options);
    agent.initialize().await;
    let sessions = json!({"name": "reticle_sessions", "arguments": {}});
    let id = agent.request("tools/call", sessions.clone()).await;
    let answer = agent
        .answer(&id, BOUND)
        .await
        .expect("the call is answered");
    let said = answer["error"]["message"].as_str().unwrap_or_default();
    assert_eq!(answer["error"]["code"], -32001, "{answer}");
    assert!(said.contains(env::MAX_MCP_SESSIONS), "{answer}");
    drop(holder);
    poll::until("a call answered once the cap is free", BOUND, async || {
        let id = agent.request("tools/call", sessions.clone()).await;
        let answer = agent.answer(&id, BOUND).await?;
        answer.get("result").map(|_| ())
    })
    .await;
}

/// Streamable HTTP sessions no client closes (the official SDK's `close()` and the conformance
/// suite never DELETE theirs) never lock an agent out: with the cap full of them, a new agent's
/// stream takes the place of the least recently used one, whose next request is refused as an
/// unknown session, while a more recent one goes on (an SSE stream is never given up for them:
/// `a_proxy_refused_by_a_full_session_cap_names_the_cap`).
#[tokio::test]
async fn idle_http_sessions_make_room_for_a_new_agent_least_recent_first() {
    let daemon = OwnedDaemon::builder()
        .env(env::MAX_MCP_SESSIONS, "2")
        .start()
        .await;
    let older = StreamableClient::open(daemon.port(), "older")
        .await
        .expect("a first session");
    let newer = StreamableClient::open(daemon.port(), "newer")
        .await
        .expect("a second session fills the cap");
    let ping = async |client: &StreamableClient| {
        client
            .request("ping", json!({}))
            .await
            .ok()
            .filter(|answer| answer.get("result").is_some())
    };
    assert!(ping(&older).await.is_some());
    assert!(ping(&newer).await.is_some(), "the newer one was used last");

    let state = tempfile::tempdir().unwrap();
    let options = ProxyOptions::new(daemon.port(), state.path())
        .env(env::QUEUE_WAIT_MS, "1500")
        .env(env::RECONNECT_ATTEMPTS, "1");
    let answer = RawMcp::call_once(options, "reticle_sessions", json!({}), BOUND).await;
    assert!(answer.get("result").is_some(), "{answer}");
    assert!(ping(&older).await.is_none(), "the least recent gave way");
    assert!(ping(&newer).await.is_some(), "the more recent one goes on");
}

/// MCP: a request its client cancelled is not answered. On Streamable HTTP the POST that carried
/// it ends with 202 and no body once the call is stopped, and its slot is freed; a call nobody
/// cancelled (the control) is answered on its POST.
#[tokio::test]
async fn a_cancelled_streamable_call_is_stopped_and_its_post_ends_unanswered() {
    let daemon = OwnedDaemon::builder()
        .env(env::TEST_CATALOGUE, "+reticle_test_sleep")
        .start()
        .await;
    let client = std::sync::Arc::new(
        StreamableClient::open(daemon.port(), "canceller")
            .await
            .expect("a session"),
    );
    let long = json!({"jsonrpc": "2.0", "id": 77, "method": "tools/call",
                      "params": {"name": "reticle_test_sleep", "arguments": {"ms": 600_000}}});
    let carrier = tokio::spawn({
        let client = client.clone();
        async move { client.post(&long).await }
    });
    let port = daemon.port();
    poll::until("the call running", BOUND, async || {
        let status = reticle::probe::fetch_status(port, Duration::from_millis(300)).await?;
        (status.calls_in_flight == 1).then_some(())
    })
    .await;
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 77, "reason": "moved on"}});
    assert_eq!(client.post(&cancel).await.unwrap().0, 202);
    let (status, body) = tokio::time::timeout(BOUND, carrier)
        .await
        .expect("the carrying POST ends")
        .unwrap()
        .unwrap();
    assert_eq!(
        (status, body.as_str()),
        (202, ""),
        "no answer to a cancelled call"
    );
    poll::until("the slot freed", BOUND, async || {
        let status = reticle::probe::fetch_status(port, Duration::from_millis(300)).await?;
        (status.calls_in_flight == 0).then_some(())
    })
    .await;
    let short = client
        .call_tool("reticle_test_sleep", json!({"ms": 1}))
        .await
        .unwrap();
    assert_eq!(short["structuredContent"]["sleptMs"], 1, "{short}");
}

/// Protocol 2025-03-26 requires JSON-RPC batches (MCP removed them after): on a session that
/// agreed to it, a batch's requests are answered together in one array, in order, with their
/// ids as sent; notifications in it get nothing; a batch of notifications only gets 202; an
/// empty batch, and an `initialize` inside one, are refused -32600. Control: a session on
/// 2025-06-18 is refused the same batch, naming its revision.
#[tokio::test]
async fn a_batch_is_answered_as_one_array_on_2025_03_26_and_refused_after() {
    let daemon = OwnedDaemon::start().await;
    let older = StreamableClient::open_on(daemon.port(), "batcher", "2025-03-26")
        .await
        .expect("a 2025-03-26 session");
    let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},
        {"jsonrpc":"2.0","method":"notifications/initialized"},
        {"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"reticle_sessions","arguments":{}}},
        {"jsonrpc":"2.0","id":1e3,"method":"ping"},
        {"jsonrpc":"2.0","id":9,"method":"initialize","params":{}}]"#;
    let (status, body) = older.post_text(batch.into()).await.unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(r#""id":1e3,"#), "ids as sent: {body}");
    let answers: Vec<Value> = serde_json::from_str(&body).expect("one array");
    let ids: Vec<Value> = answers.iter().map(|a| a["id"].clone()).collect();
    assert_eq!(
        ids,
        [json!(1), json!("b"), json!(1000.0), json!(9)],
        "{body}"
    );
    assert!(
        answers[1]["result"]["structuredContent"]["sessions"].is_array(),
        "{body}"
    );
    assert_eq!(answers[3]["error"]["code"], -32600, "{body}");

    let notes = r#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#;
    assert_eq!(
        older.post_text(notes.into()).await.unwrap(),
        (202, String::new())
    );
    let (_, empty) = older.post_text("[]".into()).await.unwrap();
    let empty: Value = serde_json::from_str(&empty).unwrap();
    assert_eq!(empty["error"]["code"], -32600, "{empty}");

    let newer = StreamableClient::open(daemon.port(), "single")
        .await
        .expect("a 2025-06-18 session");
    let (_, refused) = newer.post_text(batch.into()).await.unwrap();
    let refused: Value = serde_json::from_str(&refused).unwrap();
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let said = refused["error"]["message"].as_str().unwrap();
    assert!(said.contains("2025-06-18"), "{said}");
}

/// One rule for sessions no client closes: an open Streamable HTTP session counts against the
/// session cap (`/status` lists it open) but not as activity, so a daemon whose only client is
/// such a session still idles out (the suite and the official SDK never DELETE theirs). Control:
/// while a POST is being served the daemon counts an agent (the attachment is the request's).
#[tokio::test]
async fn an_open_http_session_counts_for_the_cap_but_not_as_activity() {
    let mut daemon = OwnedDaemon::builder()
        .env("RETICLE_IDLE_SHUTDOWN_MS", "1500")
        .env("RETICLE_HEARTBEAT_MS", "30")
        .env(env::TEST_CATALOGUE, "+reticle_test_sleep")
        .start()
        .await;
    let client = std::sync::Arc::new(
        StreamableClient::open(daemon.port(), "holder")
            .await
            .expect("a session"),
    );
    let held = tokio::spawn({
        let client = client.clone();
        async move {
            client
                .call_tool("reticle_test_sleep", json!({"ms": 1_000}))
                .await
        }
    });
    let status = poll::until("the call counted as an agent", BOUND, async || {
        let status = daemon.status().await?;
        (status.agent_count == 1).then_some(status)
    })
    .await;
    assert_eq!(status.mcp_sessions.map(|m| m.open), Some(1));
    held.await.unwrap().expect("the call answered");
    // Idle from here: the session stays open, and the daemon ends at its idle bound.
    poll::until(
        "idle shutdown with the session still open",
        BOUND,
        async || daemon.has_exited().then_some(()),
    )
    .await;
    let text = std::fs::read_to_string(daemon.log_path()).unwrap();
    assert!(text.contains("daemon_idle"), "{text}");
}
