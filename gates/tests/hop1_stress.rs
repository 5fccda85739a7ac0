//! The proxy under repeated and concurrent faults: ten daemon kills in a row with every call
//! answered; twenty concurrent calls across a kill, each answered exactly once (and the host
//! told, by `notifications/message`, of the link lost, back and a new daemon); a stream that
//! flaps without end never makes the proxy exit; a call the client cancels is stopped, its slot
//! freed, and never answered (MCP says not to), not even at the proxy's exit; a long call that
//! asked for progress is reported (`notifications/progress`) before its answer.

mod support;

use std::collections::HashMap;
use std::time::Duration;

use harness::ReapPort;
use harness::{McpClient, OpType, OwnedDaemon, ProxyOptions, RawMcp, free_port, poll};
use serde_json::json;
use support::relay::{Mode, Relay};
use support::{BOUND, LogOnFailure, daemon_on, kill_and_wait};

#[tokio::test]
async fn ten_daemon_kills_in_a_row_leave_every_call_answered() {
    let state = tempfile::tempdir().unwrap();
    let port = free_port();
    let _reap = ReapPort(port);
    let client = McpClient::start(ProxyOptions::new(port, state.path()))
        .await
        .unwrap();
    let _evidence = LogOnFailure(client.options().clone());
    let mut instances = Vec::new();
    for round in 0..10 {
        let result = client
            .call_until_ok("reticle_sessions", json!({}), BOUND)
            .await;
        instances.push(result["structuredContent"]["daemon"]["instance"].clone());
        let daemon = daemon_on(port).await;
        kill_and_wait(daemon.pid).await;
        client.history().fault(
            gates::fault::KILL_DAEMON,
            true,
            json!({ "round": round, "pid": daemon.pid }),
        );
        // A call right after the kill: answered (by the daemon or -32001), never left hanging.
        let _ = client.call_tool("reticle_sessions", json!({})).await;
    }
    client
        .call_until_ok("reticle_sessions", json!({}), BOUND)
        .await;
    let distinct: std::collections::HashSet<String> =
        instances.iter().map(|i| i.to_string()).collect();
    assert_eq!(distinct.len(), 10, "ten daemon lives served calls");
    let history = client.history();
    assert!(
        history.unanswered().is_empty(),
        "every call has an answer: {:?}",
        history.unanswered()
    );
    assert!(history.ops().iter().all(|op| op.value["timeout"] != true));
    for op in history.ops().iter().filter(|op| {
        matches!(op.op_type, OpType::Fail | OpType::Info) && op.actor == harness::Actor::Client
    }) {
        if op.f == "tools/call" {
            assert_eq!(op.value["code"], -32001, "only link losses, named: {op:?}");
        }
    }
    assert!(harness::ports::pid_alive(client.pid()));
    client.close().await;
}

/// A raw agent on `reticle mcp` whose daemon has the test-only slow tool, past its first call
/// (so a daemon is serving), with the proxy log printed if the test fails.
async fn sleepy_link(port: u16, state: &tempfile::TempDir) -> (RawMcp, LogOnFailure) {
    let opts =
        ProxyOptions::new(port, state.path()).env("RETICLE_TEST_CATALOGUE", "+reticle_test_sleep");
    let evidence = LogOnFailure(opts.clone());
    let mut raw = RawMcp::start(opts);
    raw.initialize().await;
    let warm = raw
        .request(
            "tools/call",
            json!({"name":"reticle_sessions","arguments":{}}),
        )
        .await;
    raw.answer(&warm, BOUND).await.expect("the daemon serves");
    (raw, evidence)
}

#[tokio::test]
async fn twenty_concurrent_calls_across_a_kill_are_each_answered_exactly_once() {
    let (state, port) = (tempfile::tempdir().unwrap(), free_port());
    let _reap = ReapPort(port);
    let (mut raw, _evidence) = sleepy_link(port, &state).await;
    let daemon = daemon_on(port).await;
    let mut ids = Vec::new();
    for i in 0..20 {
        let ms = if i % 2 == 0 { 50 } else { 5_000 };
        ids.push(
            raw.request(
                "tools/call",
                json!({"name":"reticle_test_sleep","arguments":{"ms": ms}}),
            )
            .await,
        );
    }
    poll::until("calls in flight at the daemon", BOUND, async || {
        let status = reticle::probe::fetch_status(port, Duration::from_millis(300)).await?;
        (status.calls_in_flight >= 5).then_some(())
    })
    .await;
    kill_and_wait(daemon.pid).await;
    for id in &ids {
        raw.answer(id, BOUND)
            .await
            .unwrap_or_else(|| panic!("call {id} answered"));
    }
    // A call after the kill goes through a new daemon: everything before it has settled.
    let after = raw
        .request(
            "tools/call",
            json!({"name":"reticle_sessions","arguments":{}}),
        )
        .await;
    poll::until("a call through the new daemon", BOUND, async || {
        let answer = raw.answer(&after, Duration::from_millis(10)).await?;
        answer.get("result").map(|_| ())
    })
    .await;
    raw.close_stdin();
    raw.wait_exit(BOUND)
        .await
        .expect("the proxy exits when stdin closes");
    // The host was told (MCP logging): the link lost, back, and a new daemon serving.
    let told: Vec<String> = raw
        .received()
        .iter()
        .filter(|line| line["method"] == "notifications/message")
        .map(|line| {
            line["params"]["data"]["event"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    for event in ["link_lost", "link_restored", "daemon_restarted"] {
        assert!(told.iter().any(|e| e == event), "{event} in {told:?}");
    }
    // The whole of stdout, to its end: each id exactly once.
    let mut counts: HashMap<String, usize> = HashMap::new();
    for answer in raw.received() {
        if let Some(id) = answer.get("id").filter(|id| !id.is_null()) {
            *counts.entry(id.to_string()).or_default() += 1;
        }
    }
    let mut lost = 0;
    for id in &ids {
        assert_eq!(
            counts.get(&id.to_string()),
            Some(&1),
            "id {id} answered exactly once"
        );
        let answer = raw.answer(id, BOUND).await.unwrap();
        if let Some(error) = answer.get("error") {
            assert_eq!(error["code"], -32001, "{answer}");
            lost += 1;
        }
    }
    assert!(lost >= 1, "the kill cost the calls in flight, each named");
}

#[tokio::test]
async fn a_stream_that_flaps_without_end_never_makes_the_proxy_exit() {
    let state = tempfile::tempdir().unwrap();
    let daemon = OwnedDaemon::start().await;
    let relay = Relay::start(daemon.port()).await;
    let client = McpClient::start(
        ProxyOptions::new(relay.port, state.path())
            .env("RETICLE_RECONNECT_ATTEMPTS", "2")
            .env("RETICLE_QUEUE_WAIT_MS", "2000"),
    )
    .await
    .unwrap();
    let _evidence = LogOnFailure(client.options().clone());
    client
        .call_until_ok("reticle_sessions", json!({}), BOUND)
        .await;
    relay.set_mode(Mode::Flap);
    relay.reset_streams();
    let opened = relay.streams_opened();
    let mut calls = 0;
    poll::until("thirty flaps", Duration::from_secs(60), async || {
        let _ = client.call_tool("reticle_sessions", json!({})).await;
        calls += 1;
        (relay.streams_opened() >= opened + 30).then_some(())
    })
    .await;
    assert!(
        harness::ports::pid_alive(client.pid()),
        "flapping never ends the proxy"
    );
    assert!(client.history().unanswered().is_empty());
    assert!(
        client
            .history()
            .ops()
            .iter()
            .all(|op| op.value["timeout"] != true),
        "every call was answered within its bound, none left hanging"
    );
    assert!(calls >= 1);
    relay.set_mode(Mode::Pass);
    relay.reset_streams();
    client
        .call_until_ok("reticle_sessions", json!({}), BOUND)
        .await;
    assert!(harness::ports::pid_alive(client.pid()));
    client.close().await;
}

#[tokio::test]
async fn a_cancelled_call_is_stopped_its_slot_freed_and_never_answered() {
    let (state, port) = (tempfile::tempdir().unwrap(), free_port());
    let _reap = ReapPort(port);
    let (mut raw, _evidence) = sleepy_link(port, &state).await;

    // Far longer than any bound below: only the cancellation can end it in time.
    let long = raw
        .request(
            "tools/call",
            json!({"name":"reticle_test_sleep","arguments":{"ms": 600_000}}),
        )
        .await;
    poll::until("the call running at the daemon", BOUND, async || {
        let status = reticle::probe::fetch_status(port, Duration::from_millis(300)).await?;
        (status.calls_in_flight == 1).then_some(())
    })
    .await;
    raw.write_line(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": long, "reason": "the user moved on"}})
        .to_string(),
    )
    .await;
    poll::until("the slot freed", BOUND, async || {
        let status = reticle::probe::fetch_status(port, Duration::from_millis(300)).await?;
        (status.calls_in_flight == 0).then_some(())
    })
    .await;

    // Control: cancelling a call that already finished changes nothing, and the link serves.
    let short = raw
        .request(
            "tools/call",
            json!({"name":"reticle_test_sleep","arguments":{"ms": 1}}),
        )
        .await;
    let done = raw.answer(&short, BOUND).await.unwrap();
    assert!(done.get("result").is_some(), "{done}");
    raw.write_line(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": short}})
        .to_string(),
    )
    .await;
    let next = raw
        .request(
            "tools/call",
            json!({"name":"reticle_sessions","arguments":{}}),
        )
        .await;
    assert!(
        raw.answer(&next, BOUND)
            .await
            .unwrap()
            .get("result")
            .is_some()
    );
    // Everything the proxy will ever write is read once it has exited: the cancelled call got
    // no answer, neither the daemon's nor a -32001 for a call still owed at exit.
    raw.close_stdin();
    let exit = raw.wait_exit(BOUND).await.expect("the proxy exits");
    assert!(exit.success(), "{exit:?}");
    assert_eq!(raw.answers_for(&long), 0, "{:?}", raw.received());
    assert_eq!(raw.answers_for(&short), 1);
}

/// A call whose client asked for progress (`_meta.progressToken`) and runs past a second is
/// reported through the proxy with `notifications/progress`, its token as sent, each with more
/// progress than the last, before its answer. Control: the same call without a token, none.
#[tokio::test]
async fn a_long_call_that_asked_for_progress_is_reported_before_its_answer() {
    let (state, port) = (tempfile::tempdir().unwrap(), free_port());
    let _reap = ReapPort(port);
    let (mut raw, _evidence) = sleepy_link(port, &state).await;
    let asked = raw
        .request(
            "tools/call",
            json!({"name": "reticle_test_sleep", "arguments": {"ms": 2_600},
                   "_meta": {"progressToken": "p-1"}}),
        )
        .await;
    let answer = raw.answer(&asked, BOUND).await.expect("answered");
    assert!(answer.get("result").is_some(), "{answer}");
    let lines = raw.received();
    let answered_at = lines.iter().position(|l| l["id"] == asked).unwrap();
    let progress: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|l| l["method"] == "notifications/progress")
        .collect();
    assert!(progress.len() >= 2, "two seconds past the first: {lines:?}");
    assert!(
        progress
            .iter()
            .all(|p| p["params"]["progressToken"] == "p-1")
    );
    let values: Vec<f64> = progress
        .iter()
        .map(|p| p["params"]["progress"].as_f64().unwrap())
        .collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
    let last_progress = lines
        .iter()
        .rposition(|l| l["method"] == "notifications/progress")
        .unwrap();
    assert!(last_progress < answered_at, "progress before the answer");

    let unasked = raw
        .request(
            "tools/call",
            json!({"name": "reticle_test_sleep", "arguments": {"ms": 1_500}}),
        )
        .await;
    raw.answer(&unasked, BOUND).await.expect("answered");
    let after: usize = raw
        .received()
        .iter()
        .filter(|l| l["method"] == "notifications/progress")
        .count();
    assert_eq!(
        after,
        progress.len(),
        "no progress for a call that did not ask"
    );
}
