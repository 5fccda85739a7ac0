//! Hop 2: faults on the link between `reticle mcp` and the daemon. The rows run their gate
//! scenarios, which put the `toxics` nemesis between the proxy and the daemon: H2.1 the SSE
//! stream reset mid-call (`reset_peer` downstream), H2.2 a call queued while the daemon is
//! blackholed (`timeout` 0), H2.3 the POST leg reset while the stream stays healthy
//! (`reset_peer` upstream), H2.7 latency, bandwidth, slicing, slow close and data limits on each
//! direction. Every toxic on every direction, and on the bridge hop too, is in
//! `hop2_transport_faults.rs`.
//!
//! A worker killed while a call runs at the daemon: the call's `posting` report reached the
//! supervisor through the posting ledger, so the call is answered as one that may have run and
//! is never sent again (control: a supervisor that never reads the ledger sends it again).
//!
//! One finer test stays on the in-test relay, because it needs a fault no TCP toxic can express:
//! only the SSE stream blackholed while `/status` still answers, so the call waits out the queue
//! bound itself instead of being refused at once as a foreign holder.

mod common;
mod support;

use harness::mcp_client::worker_of;
use harness::{McpClient, OwnedDaemon, ProxyOptions, poll};
use reticle::proxy::events as proxy_events;
use serde_json::{Value, json};
use support::relay::{Mode, Relay};
use support::{BOUND, LogOnFailure, events};

#[tokio::test]
async fn h2_1_a_forwarded_call_whose_stream_drops_is_answered_at_once_naming_the_drop() {
    let ran = common::row_meets_target("H2.1").await;
    rejudged_alike_and_unserved_is_silent("H2.1", &ran);
}

#[tokio::test]
async fn h2_2_a_call_queued_while_the_daemon_is_blackholed_is_answered_never_sent() {
    let ran = common::row_meets_target("H2.2").await;
    rejudged_alike_and_unserved_is_silent("H2.2", &ran);
}

#[tokio::test]
async fn h2_3_a_post_reset_while_the_stream_is_healthy_is_answered_and_the_stream_stays() {
    let ran = common::row_meets_target("H2.3").await;
    rejudged_alike_and_unserved_is_silent("H2.3", &ran);
}

/// The trace check under faults (every proxied daemon is traced): a daemon whose trace breaks
/// while the POST leg is reset makes H2.3 silent, naming the invariant, though the agent saw
/// every call answered as it should be.
#[tokio::test]
async fn h2_3_a_daemon_whose_trace_breaks_under_the_fault_is_silent() {
    let control =
        gates::controls::stand_in_broken_trace_under_a_fault(&harness::binaries::reticle()).await;
    assert_eq!(
        control.outcome,
        gates::judge::RowOutcome::Silent,
        "{control:?}"
    );
    assert!(control.evidence.contains("trace broke"), "{control:?}");
}

#[tokio::test]
async fn h2_7_latency_bandwidth_slicing_and_limits_on_each_direction_answer_every_call_once() {
    common::row_meets_target("H2.7").await;
}

/// The negative control of H2.7's checker: a stand-in MCP server that answers `initialize` and
/// `tools/list` but swallows every `tools/call` must be scored silent by H2.7's scenario.
#[tokio::test]
async fn the_stand_in_mcp_server_that_swallows_calls_is_scored_silent() {
    let control = gates::controls::stand_in_mcp_swallows_calls().await;
    assert_eq!(
        control.outcome,
        gates::judge::RowOutcome::Silent,
        "{control:?}"
    );
    assert!(control.evidence.contains("never answered"), "{control:?}");
}

/// H2.7's per-toxic control: a proxy whose tools refuse every call after warm-up gets through
/// the warm-up and goes red under the first toxic, on the rounds' own logic.
#[tokio::test]
async fn the_proxy_that_refuses_after_warm_up_goes_red_under_the_first_toxic() {
    let control =
        gates::controls::stand_in_tools_refuse_after_warm_up(&harness::binaries::reticle(), "H2.7")
            .await;
    assert!(control.went_red(), "{control:?}");
    assert!(control.evidence.contains("under "), "{control:?}");
    assert!(control.evidence.contains("stand-in"), "{control:?}");
}

/// Kills the worker of a proxy (with `proxy_env`) while its 120 s call runs at a fresh daemon;
/// how the call was answered within [`BOUND`] (`None`: it was not), and whether the daemon was
/// then running it twice (it was sent again).
async fn answer_after_the_worker_dies_mid_call(
    proxy_env: &[(&str, &str)],
) -> (Option<Value>, bool) {
    let daemon = OwnedDaemon::builder()
        .env(reticle::config::env::TEST_CATALOGUE, "+reticle_test_sleep")
        .start()
        .await;
    let state = tempfile::tempdir().unwrap();
    let options = proxy_env.iter().fold(
        ProxyOptions::new(daemon.port(), state.path()),
        |options, (key, value)| options.env(key, *value),
    );
    let client = std::sync::Arc::new(McpClient::start(options).await.expect("the proxy starts"));
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
    let worker = poll::until("the worker to be listed", BOUND, async || {
        worker_of(client.pid())
    })
    .await;
    poll::until("the call to run at the daemon", BOUND, async || {
        let status = daemon.status().await?;
        (status.calls_in_flight == 1).then_some(())
    })
    .await;
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(worker as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let answer = match tokio::time::timeout(BOUND, slow).await {
        Ok(Ok(Err(harness::McpFailure::Rpc {
            code: -32001, data, ..
        }))) => data,
        _ => None,
    };
    let twice = daemon
        .status()
        .await
        .is_some_and(|status| status.calls_in_flight == 2);
    (answer, twice)
}

#[tokio::test]
async fn a_worker_killed_mid_call_leaves_the_call_answered_as_possibly_run_and_never_resent() {
    let (answer, twice) = answer_after_the_worker_dies_mid_call(&[]).await;
    let data = answer.expect("the call is answered -32001 at once");
    assert_eq!(data["population"], "in_flight_lost", "{data}");
    assert_eq!(data["ran"], "unknown", "{data}");
    assert!(!twice, "the call was sent again");

    // Control: a supervisor that never reads the ledger takes the call for unsent and sends it
    // again (the call is still unanswered when the bound ends, so the resend is running).
    let unread = [(reticle::config::env::TEST_STAND_IN_LEDGER_UNREAD, "1")];
    assert_eq!(
        answer_after_the_worker_dies_mid_call(&unread).await,
        (None, true)
    );
}

#[tokio::test]
async fn a_call_queued_while_only_the_stream_is_blackholed_is_answered_at_the_queue_bound() {
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
    assert_eq!(events(&log, proxy_events::QUEUE_EXPIRED).len(), 1);

    // Control: the same proxy, once the stream can open, serves the call.
    relay.set_mode(Mode::Pass);
    client
        .call_until_ok("reticle_sessions", json!({}), BOUND)
        .await;
}

/// H2.1 to H2.3 are judged from their history alone (the marked call, the outages the proxy
/// logged, whether the link served again, the nemesis the fault recorded): the live run's
/// history judged again offline, as `reticle gate analyze` does, gives the live judgement; the
/// same history recording that the link never served again once the fault went is silent.
fn rejudged_alike_and_unserved_is_silent(row: &str, ran: &gates::scenarios::Ran) {
    let mut ops = common::rejudged_alike(row, ran);
    for op in ops.iter_mut() {
        if op.f == gates::scenarios::agent_kit::SERVED_AGAIN {
            op.value["served"] = json!(false);
        }
    }
    let edited = gates::analyze::judge_history(row, &ops).expect("re-judged");
    assert_eq!(
        edited.outcome,
        gates::judge::RowOutcome::Silent,
        "{row}: an edited history: {edited:?}"
    );
    assert!(edited.evidence.contains("never served again"), "{edited:?}");
}
