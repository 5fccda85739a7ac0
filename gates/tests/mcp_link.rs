//! Hop 2: faults on the link between `reticle mcp` and the daemon, through an in-test relay.
//! H2.1 the SSE stream reset mid-call; H2.2 a call queued while the stream is blackholed; H2.3
//! the POST leg reset while the stream stays healthy; and (part of H2.7, until the toxics nemesis
//! lands) a link that delivers every byte stream in slices of 1 to 7 bytes. Each is answered -32001 naming what
//! happened and whether the call ran, and the link serves again once the fault heals.

mod support;

use std::sync::Arc;
use std::time::Duration;

use harness::{McpClient, OwnedDaemon, ProxyOptions, poll};
use serde_json::json;
use support::relay::{Mode, Relay};
use support::{BOUND, LogOnFailure, events};

/// A daemon whose catalogue has the test sleep, to hold a call in flight.
fn sleeper() -> harness::OwnedDaemonBuilder {
    OwnedDaemon::builder().env("RETICLE_TEST_CATALOGUE", "+reticle_test_sleep")
}

#[tokio::test]
async fn h2_1_a_forwarded_call_whose_stream_drops_is_answered_at_once_naming_the_drop() {
    let state = tempfile::tempdir().unwrap();
    let daemon = sleeper().start().await;
    let relay = Relay::start(daemon.port()).await;
    let client = Arc::new(
        McpClient::start(
            ProxyOptions::new(relay.port, state.path()).env("RETICLE_QUEUE_WAIT_MS", "60000"),
        )
        .await
        .unwrap(),
    );
    let _evidence = LogOnFailure(client.options().clone());
    client
        .call_until_ok("reticle_sessions", json!({}), BOUND)
        .await;

    let caller = client.clone();
    let slow = tokio::spawn(async move {
        caller
            .call_tool("reticle_test_sleep", json!({ "ms": 120_000 }))
            .await
    });
    poll::until(
        "the slow call to be running at the daemon",
        BOUND,
        async || {
            let status = daemon.status().await?;
            (status.calls_in_flight == 1).then_some(())
        },
    )
    .await;
    assert_eq!(relay.reset_streams(), 1, "one stream to reset");
    // Well inside the queue wait (60 s) and the call's own length (120 s).
    let failure = tokio::time::timeout(Duration::from_secs(10), slow)
        .await
        .expect("answered as soon as the drop is seen")
        .unwrap()
        .expect_err("the call's answer was lost with the stream");
    assert_eq!(failure.code(), Some(-32001));
    assert!(
        failure.message().contains("dropped"),
        "{}",
        failure.message()
    );
    assert!(
        failure.message().contains("may or may not have run"),
        "{}",
        failure.message()
    );
    let data = match &failure {
        harness::McpFailure::Rpc { data, .. } => data.clone().unwrap(),
        other => panic!("{other:?}"),
    };
    assert_eq!(data["population"], "in_flight_lost");

    // The link comes back on its own and the next call succeeds, exactly once.
    client
        .call_until_ok("reticle_sessions", json!({}), BOUND)
        .await;
    assert!(relay.streams_opened() >= 2);
    assert!(client.history().unanswered().is_empty());
    let log = client.options().log_events();
    let lost = events(&log, "mcp_connection_lost");
    assert!(
        lost.iter()
            .any(|e| e["stage"] == "lost" && e["callsLost"] == 1),
        "{lost:?}"
    );
    assert!(lost.iter().any(|e| e["stage"] == "recovered"), "{lost:?}");
}

#[tokio::test]
async fn h2_2_a_call_queued_while_the_stream_is_blackholed_is_answered_at_the_queue_bound() {
    let state = tempfile::tempdir().unwrap();
    let daemon = OwnedDaemon::start().await;
    let relay = Relay::start(daemon.port()).await;
    relay.set_mode(Mode::BlackholeStreams);
    let client = McpClient::start(
        ProxyOptions::new(relay.port, state.path()).env("RETICLE_QUEUE_WAIT_MS", "1500"),
    )
    .await
    .expect("initialize is answered though no stream can open");
    let _evidence = LogOnFailure(client.options().clone());
    let failure = client
        .call_tool("reticle_sessions", json!({}))
        .await
        .expect_err("no stream, so the call can never be sent");
    assert_eq!(failure.code(), Some(-32001));
    let data = match &failure {
        harness::McpFailure::Rpc { data, .. } => data.clone().unwrap(),
        other => panic!("{other:?}"),
    };
    assert_eq!(data["population"], "never_sent");
    assert_eq!(data["ran"], "no");
    assert!(
        failure.message().contains("within 1500 ms"),
        "{}",
        failure.message()
    );
    assert!(
        failure.message().contains("did not run"),
        "{}",
        failure.message()
    );
    let log = client.options().log_events();
    assert_eq!(events(&log, "mcp_queue_expired").len(), 1);

    // Control: the same proxy, once the stream can open, serves the call.
    relay.set_mode(Mode::Pass);
    client
        .call_until_ok("reticle_sessions", json!({}), BOUND)
        .await;
}

#[tokio::test]
async fn h2_3_a_post_reset_while_the_stream_is_healthy_is_answered_and_the_stream_stays() {
    let state = tempfile::tempdir().unwrap();
    let daemon = OwnedDaemon::start().await;
    let relay = Relay::start(daemon.port()).await;
    let client = McpClient::start(ProxyOptions::new(relay.port, state.path()))
        .await
        .unwrap();
    let _evidence = LogOnFailure(client.options().clone());
    client
        .call_until_ok("reticle_sessions", json!({}), BOUND)
        .await;
    let streams = relay.streams_opened();

    relay.set_mode(Mode::ResetPosts);
    let failure = client
        .call_tool("reticle_sessions", json!({}))
        .await
        .expect_err("its POST was reset");
    assert_eq!(failure.code(), Some(-32001));
    let data = match &failure {
        harness::McpFailure::Rpc { data, .. } => data.clone().unwrap(),
        other => panic!("{other:?}"),
    };
    assert_eq!(data["population"], "post_failed");
    assert!(
        failure.message().contains("still up"),
        "{}",
        failure.message()
    );
    assert!(relay.posts_reset() >= 1);

    relay.set_mode(Mode::Pass);
    client
        .call_tool("reticle_sessions", json!({}))
        .await
        .expect("the next call succeeds");
    assert_eq!(
        relay.streams_opened(),
        streams,
        "the stream was never dropped or reopened"
    );
    assert_eq!(relay.streams_open(), 1);
    let log = client.options().log_events();
    assert!(
        events(&log, "mcp_connection_lost").is_empty(),
        "no outage: only the POST failed"
    );
}

#[tokio::test]
async fn h2_7_part_a_link_sliced_into_tiny_pieces_still_answers_every_call_once() {
    let state = tempfile::tempdir().unwrap();
    let daemon = OwnedDaemon::start().await;
    let relay = Relay::start(daemon.port()).await;
    relay.set_mode(Mode::Slice);
    let client = McpClient::start(ProxyOptions::new(relay.port, state.path()))
        .await
        .unwrap();
    let _evidence = LogOnFailure(client.options().clone());
    client
        .call_until_ok("reticle_sessions", json!({}), BOUND)
        .await;
    for _ in 0..30 {
        client
            .call_tool("reticle_sessions", json!({}))
            .await
            .expect("a sliced link serves");
        let tools = client.list_tools().await.unwrap();
        assert_eq!(tools.first().map(String::as_str), Some("reticle_sessions"));
        assert!(
            tools.iter().any(|t| t == "reticle_act_and_wait"),
            "{tools:?}"
        );
    }
    assert_eq!(relay.streams_opened(), 1, "slicing never broke the stream");
    assert!(client.history().unanswered().is_empty());
}
