//! Hop 1 and the handshake: `reticle mcp` survives what is done to it and around it, driven by a
//! real MCP client (rmcp over stdio) or, for what no client would send, line by line.
//!
//! H1.1 the `lsof -ti tcp:PORT | xargs kill -9` recipe mid-session; H1.2 a panic inside request
//! handling; H1.3 a wedged port past the reconnect budget; H1.4 stdin closed with calls in
//! flight; H1.5 garbage on stdin; H2.4 a squatter; H2.5 a daemon restarted with another
//! catalogue; H2.6 handshake replay into a restarted daemon.

mod support;

use std::process::Command;
use std::time::Duration;

use harness::{McpClient, OwnedDaemon, ProxyOptions, RawMcp, free_port, poll};
use serde_json::{Value, json};
use support::relay::{Mode, Relay};
use support::{BOUND, LogOnFailure, Reap, Squatter, daemon_on, error_of, events, kill_and_wait};

fn options(port: u16, state: &tempfile::TempDir) -> ProxyOptions {
    ProxyOptions::new(port, state.path())
}

#[tokio::test]
async fn h1_1_the_lsof_kill_recipe_mid_session_costs_nothing_after_it() {
    let state = tempfile::tempdir().unwrap();
    let port = free_port();
    let _reap = Reap(port);
    let client = McpClient::start(options(port, &state)).await.unwrap();
    let _evidence = LogOnFailure(client.options().clone());
    let first = client
        .call_until_ok("reticle_sessions", json!({}), BOUND)
        .await;
    let instance = first["structuredContent"]["daemon"]["instance"].clone();
    // Only /proc is read from here on: the test itself must hold no socket on the port, or the
    // recipe would kill it too.
    let me = std::process::id();
    let holders = poll::until(
        "the harness to hold no socket on the port",
        BOUND,
        async || {
            let holders = harness::ports::holders(port);
            holders.iter().all(|h| h.pid != me).then_some(holders)
        },
    )
    .await;
    assert!(
        holders.iter().all(|h| h.pid != client.pid()),
        "the stdio-owning process must hold no socket on the port: {holders:?}"
    );
    let daemon = harness::ports::listeners(port)[0].pid;
    let worker = holders
        .iter()
        .find(|h| h.pid != daemon)
        .map(|h| h.pid)
        .expect("the worker holds the daemon link");

    let recipe = format!("lsof -ti tcp:{port} | xargs kill -9");
    let ran = Command::new("sh").args(["-c", &recipe]).status().unwrap();
    assert!(ran.success(), "the recipe ran");
    poll::until("the recipe's victims to die", BOUND, async || {
        (!harness::ports::pid_alive(daemon) && !harness::ports::pid_alive(worker)).then_some(())
    })
    .await;
    assert!(
        harness::ports::pid_alive(client.pid()),
        "the proxy survives the recipe"
    );

    // The very next calls succeed: a new worker, a new daemon, the handshake replayed.
    let result = client
        .call_tool("reticle_sessions", json!({}))
        .await
        .expect("the next call succeeds");
    let after = daemon_on(port).await;
    assert_ne!(json!(after.instance), instance);
    assert_eq!(
        result["structuredContent"]["daemon"]["instance"],
        after.instance
    );
    for _ in 0..3 {
        client
            .call_tool("reticle_sessions", json!({}))
            .await
            .unwrap();
    }
    assert!(client.history().unanswered().is_empty());
    let log = client.options().log_events();
    assert!(
        !events(&log, "mcp_link_process_exited").is_empty(),
        "the worker's death is logged"
    );
    client.close().await;
}

#[tokio::test]
async fn h1_2_a_panic_inside_request_handling_is_answered_and_the_next_call_succeeds() {
    let state = tempfile::tempdir().unwrap();
    let port = free_port();
    let _reap = Reap(port);
    let client = McpClient::start(options(port, &state).env("RETICLE_TEST_PANIC_METHOD", "ping"))
        .await
        .unwrap();
    // Control: an ordinary call works.
    client
        .call_until_ok("reticle_sessions", json!({}), BOUND)
        .await;
    let pid = client.pid();
    let failure = client.ping().await.expect_err("the fault hook panics");
    assert_eq!(failure.code(), Some(-32603));
    assert!(
        failure.message().contains("still serving"),
        "{}",
        failure.message()
    );
    client
        .call_tool("reticle_sessions", json!({}))
        .await
        .expect("the next call succeeds");
    assert!(client.ping().await.is_err(), "the hook fires every time");
    client
        .call_tool("reticle_sessions", json!({}))
        .await
        .unwrap();
    assert!(harness::ports::pid_alive(pid));
    let log = client.options().log_events();
    assert_eq!(events(&log, "mcp_proxy_panic").len(), 2);
    client.close().await;
}

#[tokio::test]
async fn h1_3_a_wedged_port_past_the_reconnect_budget_leaves_the_proxy_up_and_it_recovers() {
    let state = tempfile::tempdir().unwrap();
    let daemon = OwnedDaemon::start().await;
    let relay = Relay::start(daemon.port()).await;
    let client =
        McpClient::start(options(relay.port, &state).env("RETICLE_RECONNECT_ATTEMPTS", "2"))
            .await
            .unwrap();
    let _evidence = LogOnFailure(client.options().clone());
    client
        .call_until_ok("reticle_sessions", json!({}), BOUND)
        .await;

    relay.set_mode(Mode::Wedge);
    let opts = client.options().clone();
    // The dormant line is written just after the budget line: wait for it, then read both.
    poll::until(
        "dormant after the budget",
        Duration::from_secs(60),
        async || {
            events(&opts.log_events(), "mcp_state")
                .into_iter()
                .find(|e| e["to"] == "dormant")
        },
    )
    .await;
    let log = opts.log_events();
    assert!(
        events(&log, "mcp_connection_lost")
            .iter()
            .any(|e| e["stage"] == "budget_spent"),
        "dormant because the budget was spent: never an exit"
    );
    assert!(harness::ports::pid_alive(client.pid()));
    client.ping().await.expect("a dormant proxy still answers");
    let refused = client
        .call_tool("reticle_sessions", json!({}))
        .await
        .expect_err("the wedge is named");
    assert_eq!(refused.code(), Some(-32001));
    assert!(
        refused.message().contains(&relay.port.to_string()),
        "{}",
        refused.message()
    );

    relay.set_mode(Mode::Pass);
    client
        .call_until_ok("reticle_sessions", json!({}), BOUND)
        .await;
    assert!(harness::ports::pid_alive(client.pid()));
    client.close().await;
}

#[tokio::test]
async fn h1_4_closing_stdin_with_calls_in_flight_answers_or_logs_every_id_before_exit() {
    let state = tempfile::tempdir().unwrap();
    let port = free_port();
    let _reap = Reap(port);
    let opts = options(port, &state)
        .env("RETICLE_TEST_CATALOGUE", "+reticle_test_sleep")
        .env("RETICLE_DRAIN_MS", "6000");
    let mut raw = RawMcp::start(opts.clone());
    raw.initialize().await;
    let warm = raw
        .request(
            "tools/call",
            json!({"name":"reticle_sessions","arguments":{}}),
        )
        .await;
    assert!(
        raw.answer(&warm, BOUND)
            .await
            .unwrap()
            .get("result")
            .is_some()
    );
    let mut short = Vec::new();
    let mut long = Vec::new();
    for _ in 0..3 {
        short.push(
            raw.request(
                "tools/call",
                json!({"name":"reticle_test_sleep","arguments":{"ms":2000}}),
            )
            .await,
        );
        long.push(
            raw.request(
                "tools/call",
                json!({"name":"reticle_test_sleep","arguments":{"ms":120000}}),
            )
            .await,
        );
    }
    poll::until("six calls in flight at the daemon", BOUND, async || {
        let status = reticle::probe::fetch_status(port, Duration::from_millis(500)).await?;
        (status.calls_in_flight >= 6).then_some(())
    })
    .await;
    raw.close_stdin();
    let status = raw
        .wait_exit(BOUND)
        .await
        .expect("the proxy exits after its drain");
    assert_eq!(status.code(), Some(1), "calls were still owed at the bound");
    for id in short.iter().chain(&long) {
        assert_eq!(raw.answers_for(id), 1, "id {id} answered exactly once");
    }
    for id in &short {
        assert!(
            raw.answer(id, BOUND).await.unwrap().get("result").is_some(),
            "{id} finished in the drain"
        );
    }
    for id in &long {
        let answer = raw.answer(id, BOUND).await.unwrap();
        assert_eq!(error_of(&answer)["code"], -32001);
        assert_eq!(error_of(&answer)["data"]["population"], "owed_at_exit");
    }
    let log = opts.log_events();
    let unanswered = events(&log, "mcp_unanswered_at_exit");
    assert_eq!(unanswered.len(), 1);
    let logged: Vec<Value> = unanswered[0]["ids"].as_array().unwrap().clone();
    assert_eq!(logged, long, "every id still owed is logged");

    // Control: nothing in flight, and stdin closing ends the proxy at once with 0.
    let mut idle = RawMcp::start(opts);
    idle.initialize().await;
    idle.close_stdin();
    let status = idle.wait_exit(BOUND).await.unwrap();
    assert_eq!(status.code(), Some(0));
}

#[tokio::test]
async fn h1_5_garbage_on_stdin_is_answered_per_json_rpc_and_never_fatal() {
    let state = tempfile::tempdir().unwrap();
    let port = free_port();
    let _reap = Reap(port);
    let mut raw = RawMcp::start(options(port, &state));
    raw.initialize().await;
    // Control: a good call before the garbage.
    let before = raw.request("tools/list", json!({})).await;
    assert!(raw.answer(&before, BOUND).await.unwrap()["result"]["tools"].is_array());

    raw.write_line("this is not json").await;
    raw.write_line(r#"{"jsonrpc":"2.0","id":77,"method":"tools/li"#)
        .await;
    raw.write_line(&"x".repeat(200 * 1024)).await;
    raw.write_line(&format!(
        r#"{{"jsonrpc":"2.0","id":78,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "y".repeat(200 * 1024)
    ))
    .await;
    raw.write_line(&"z".repeat(5 * 1024 * 1024)).await;
    raw.write_line("[]").await;
    raw.write_line(r#"{"jsonrpc":"2.0","id":79}"#).await;
    raw.write_line("").await;
    raw.write_line("\u{1}\u{2}\u{3}").await;

    let after = raw.request("tools/list", json!({})).await;
    let listed = raw
        .answer(&after, BOUND)
        .await
        .expect("tools/list still answers");
    assert!(
        listed["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "reticle_sessions")
    );
    let pong = raw
        .answer(&json!(78), BOUND)
        .await
        .expect("a valid 200 KB line is served");
    assert!(pong.get("result").is_some(), "{pong}");
    let errors: Vec<Value> = raw
        .received()
        .into_iter()
        .filter(|v| v.get("error").is_some())
        .collect();
    let codes: Vec<i64> = errors
        .iter()
        .map(|e| e["error"]["code"].as_i64().unwrap())
        .collect();
    assert_eq!(
        codes.iter().filter(|c| **c == -32700).count(),
        4,
        "{errors:?}"
    );
    assert_eq!(
        codes.iter().filter(|c| **c == -32600).count(),
        3,
        "{errors:?}"
    );
    assert!(
        errors.iter().any(|e| e["id"] == 79),
        "a readable id is echoed"
    );
    assert!(harness::ports::pid_alive(raw.pid()));
}

#[tokio::test]
async fn h2_4_a_squatter_is_answered_within_a_second_named_and_left_behind_once_it_leaves() {
    let state = tempfile::tempdir().unwrap();
    let port = free_port();
    let _reap = Reap(port);
    let squatter = Squatter::start(port).await;
    let client = tokio::time::timeout(
        Duration::from_secs(1),
        McpClient::start(options(port, &state)),
    )
    .await
    .expect("initialize is answered within 1 s despite the squatter")
    .unwrap();
    let failure = client
        .call_tool("reticle_sessions", json!({}))
        .await
        .expect_err("no daemon can be had while the squatter holds the port");
    assert_eq!(failure.code(), Some(-32001));
    let message = failure.message();
    assert!(message.contains(&format!("port {port}")), "{message}");
    assert!(
        message.contains(&format!("pid {}", squatter.pid())),
        "names the squatter: {message}"
    );
    assert!(message.contains("did not run"), "{message}");

    squatter.leave(port).await;
    let result = client
        .call_until_ok("reticle_sessions", json!({}), BOUND)
        .await;
    assert_eq!(result["structuredContent"]["daemon"]["port"], port);
    client.close().await;
}

/// Raw mode: the order of what arrives on stdout is the point, and rmcp hands notifications to
/// its handler on a task of their own.
#[tokio::test]
async fn h2_5_a_daemon_restarted_with_another_catalogue_is_announced_before_its_tools() {
    let state = tempfile::tempdir().unwrap();
    let port = free_port();
    let first = OwnedDaemon::builder()
        .port(port)
        .state_dir(state.path())
        .start()
        .await;
    let mut raw = RawMcp::start(options(port, &state));
    raw.initialize().await;
    let names = |answer: &Value| -> Vec<String> {
        answer["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("a catalogue, got {answer}"))
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    let id = raw.request("tools/list", json!({})).await;
    let standard = names(&raw.answer(&id, BOUND).await.unwrap());
    assert_eq!(standard[0], "reticle_sessions");
    let notices = |raw: &RawMcp| {
        raw.received()
            .iter()
            .filter(|v| v["method"] == "notifications/tools/list_changed")
            .count()
    };

    // Control: the same catalogue in a new daemon life is not announced.
    drop(first);
    let _same = OwnedDaemon::builder()
        .port(port)
        .state_dir(state.path())
        .start()
        .await;
    let id = raw.request("tools/list", json!({})).await;
    assert_eq!(names(&raw.answer(&id, BOUND).await.unwrap()), standard);
    assert_eq!(notices(&raw), 0);

    drop(_same);
    let _changed = OwnedDaemon::builder()
        .port(port)
        .state_dir(state.path())
        .env("RETICLE_TEST_CATALOGUE", "+reticle_test_echo")
        .start()
        .await;
    let id = raw.request("tools/list", json!({})).await;
    let listed = raw.answer(&id, BOUND).await.unwrap();
    let mut edited = standard.clone();
    edited.push("reticle_test_echo".to_string());
    assert_eq!(names(&listed), edited);
    assert_eq!(notices(&raw), 1);
    let received = raw.received();
    let notice_at = received
        .iter()
        .position(|v| v["method"] == "notifications/tools/list_changed")
        .unwrap();
    let listed_at = received
        .iter()
        .position(|v| v.get("id") == Some(&id))
        .unwrap();
    assert!(
        notice_at < listed_at,
        "list_changed comes before anything from the new daemon"
    );
    // Never a catalogue the daemon does not implement: every answer lists only served tools.
    let call = raw
        .request(
            "tools/call",
            json!({"name": "reticle_test_echo", "arguments": {"a": 1}}),
        )
        .await;
    assert!(
        raw.answer(&call, BOUND)
            .await
            .unwrap()
            .get("result")
            .is_some()
    );
    let log = raw.options().log_events();
    assert_eq!(events(&log, "mcp_tools_list_changed").len(), 1);
}

#[tokio::test]
async fn h2_6_a_call_after_the_daemon_is_killed_and_restarted_reaches_an_initialized_session() {
    let state = tempfile::tempdir().unwrap();
    let port = free_port();
    let _reap = Reap(port);
    let client = McpClient::start(options(port, &state)).await.unwrap();
    let _evidence = LogOnFailure(client.options().clone());
    client
        .call_until_ok("reticle_sessions", json!({}), BOUND)
        .await;
    let before = daemon_on(port).await;
    kill_and_wait(before.pid).await;
    // "Then call": once the proxy has seen the daemon go.
    let opts = client.options().clone();
    poll::until("the proxy to see the daemon go", BOUND, async || {
        events(&opts.log_events(), "mcp_connection_lost")
            .into_iter()
            .next()
    })
    .await;
    let result = client
        .call_tool("reticle_sessions", json!({}))
        .await
        .expect("the call reaches an initialized session of the new daemon");
    let after = daemon_on(port).await;
    assert_ne!(after.instance, before.instance);
    assert_eq!(
        result["structuredContent"]["daemon"]["instance"],
        after.instance
    );
    let daemon_log =
        std::fs::read_to_string(state.path().join(format!("daemon-{port}.log"))).unwrap();
    assert!(
        !daemon_log.contains("mcp_call_refused"),
        "no call reached an uninitialized session"
    );
    // The control (a session that skips initialize is refused and logged) is in mcp_endpoint.rs.
    client.close().await;
}
