//! Sessions and commands through a real daemon: a hello with a connected id replaces the old
//! socket when that one answers no ping (really closed, its pending command lost, the session and
//! its cursor carried on), and is refused `session in use` when it answers (S9); a
//! page lost with commands pending resolves them at once as `observation_lost` (H4.3), never as
//! the app's failure; results match by id out of order; a silent page times out at the bound;
//! the reaper marks a quiet session idle and the next command revives it (H4.4, through its gate
//! scenario); two sessions, one closed, the other drivable; a connected page holds off idle
//! shutdown; shutdown closes 1001.

use std::time::Duration;

mod common;

use harness::wire_page::echo_responder;
use harness::{BridgeClient, OwnedDaemon, WirePage, poll};
use serde_json::{Value, json};

const BOUND: Duration = Duration::from_secs(15);
const ORIGIN: Option<&str> = Some("http://localhost:5173");

async fn connect(daemon: &OwnedDaemon, id: &str, answer: bool) -> WirePage {
    let responder = answer.then(echo_responder);
    let page = WirePage::open_with(daemon.port(), ORIGIN, responder)
        .await
        .expect("the page connects");
    page.hello(id, Some(&daemon.token())).await;
    let client = BridgeClient::new(daemon.port());
    poll::until(&format!("session {id}"), BOUND, async || {
        client.session(id).await.map(|_| ())
    })
    .await;
    page
}

fn spawn_command(
    port: u16,
    id: &str,
    name: &str,
    timeout: Option<Duration>,
) -> tokio::task::JoinHandle<Value> {
    let client = BridgeClient::new(port);
    let (id, name) = (id.to_string(), name.to_string());
    tokio::spawn(async move { client.command(Some(&id), &name, json!({}), timeout).await })
}

#[tokio::test]
async fn a_hello_with_a_connected_id_replaces_the_old_socket_which_is_really_closed() {
    let daemon = OwnedDaemon::start().await;
    let client = BridgeClient::new(daemon.port());
    let mut old = connect(&daemon, "dup", false).await;
    old.event("dup", "signal", json!({"name": "before"})).await;
    // Stored before the replacement: frames still unread on a replaced socket are not the
    // session's (they would land out of order behind the new socket's).
    poll::until("the old socket's event stored", BOUND, async || {
        let read = client.events("dup", None).await;
        (read["events"].as_array()?.len() == 1).then_some(())
    })
    .await;
    let pending = spawn_command(daemon.port(), "dup", "snapshot", None);
    old.next_command(BOUND)
        .await
        .expect("the old socket got the command");

    // The old socket's connection has died without a close: it answers no ping.
    old.freeze();
    let new = connect(&daemon, "dup", true).await;
    poll::until("the new socket carries dup", BOUND, async || {
        (client.session("dup").await?["counters"]["links"] == 2).then_some(())
    })
    .await;
    old.thaw();
    let (code, reason) = old.closed(BOUND).await.expect("the old socket is closed");
    assert_eq!(code, Some(1008));
    assert!(reason.contains("replaced"), "{reason}");
    assert!(!old.send_text("{}").await || old.closed(BOUND).await.is_some());

    let lost = pending.await.unwrap();
    assert_eq!(lost["outcome"], "observation_lost", "{lost}");
    assert!(
        lost["reason"].as_str().unwrap().contains("replaced"),
        "{lost}"
    );

    new.event("dup", "signal", json!({"name": "after"})).await;
    let read = poll::until("both events in one stream", BOUND, async || {
        let read = client.events("dup", None).await;
        (read["events"].as_array()?.len() == 2).then_some(read)
    })
    .await;
    assert_eq!(read["events"][0]["data"]["name"], "before");
    assert_eq!(read["events"][1]["data"]["name"], "after");
    let session = client.session("dup").await.unwrap();
    assert_eq!(session["counters"]["links"], 2);
    assert_eq!(client.status().await["sessionCount"], 1);
    let answer = client.command(Some("dup"), "query", json!({}), None).await;
    assert_eq!(
        answer["outcome"], "answered",
        "the replacement is drivable: {answer}"
    );
}

#[tokio::test]
async fn a_hello_with_the_id_of_a_live_socket_is_refused_naming_the_conflict() {
    let daemon = OwnedDaemon::start().await;
    let client = BridgeClient::new(daemon.port());
    let mut first = connect(&daemon, "shared", true).await;
    let mut second = WirePage::open(daemon.port(), ORIGIN).await.unwrap();
    second.hello("shared", Some(&daemon.token())).await;
    let (code, reason) = second.closed(BOUND).await.expect("the newcomer is refused");
    assert_eq!(code, Some(1008));
    assert!(
        reason.starts_with(reticle::wire::close::SESSION_IN_USE),
        "{reason}"
    );
    assert!(
        first.next(Duration::from_millis(200)).await.is_none(),
        "the live socket keeps its session"
    );
    let session = client.session("shared").await.unwrap();
    assert_eq!(session["counters"]["links"], 1);
    let answer = client
        .command(Some("shared"), "query", json!({}), None)
        .await;
    assert_eq!(answer["outcome"], "answered", "{answer}");
}

/// H4.3 with raw frames and three commands pending (the gate's H4.3 scenario closes a real tab
/// with one; see `hop5_browser_rows.rs`).
#[tokio::test]
async fn a_lost_page_resolves_every_pending_command_as_observation_lost() {
    let daemon = OwnedDaemon::start().await;
    let mut page = connect(&daemon, "leaving", false).await;
    let pending: Vec<_> = ["snapshot", "query", "act"]
        .into_iter()
        .map(|name| {
            spawn_command(
                daemon.port(),
                "leaving",
                name,
                Some(Duration::from_secs(60)),
            )
        })
        .collect();
    for _ in 0..3 {
        page.next_command(BOUND)
            .await
            .expect("a command reached the page");
    }
    drop(page);
    for task in pending {
        let outcome = task.await.unwrap();
        assert_eq!(outcome["outcome"], "observation_lost", "{outcome}");
        assert!(
            outcome.get("ok").is_none(),
            "never the app's ok:false: {outcome}"
        );
        assert!(
            outcome["reason"].as_str().unwrap().contains("disconnected"),
            "{outcome}"
        );
    }
    // Control: a page that answers gives an answer, and one that refuses gives ok:false.
    let _answering = connect(&daemon, "answering", true).await;
    let answer = BridgeClient::new(daemon.port())
        .command(Some("answering"), "query", json!({}), None)
        .await;
    assert_eq!(answer["outcome"], "answered");
    assert_eq!(answer["ok"], true);
    let mut refusing = connect(&daemon, "refusing", false).await;
    let waiting = spawn_command(daemon.port(), "refusing", "nope", None);
    let command = refusing.next_command(BOUND).await.unwrap();
    refusing
        .answer(&command, false, json!("unknown command 'nope'"))
        .await;
    let refused = waiting.await.unwrap();
    assert_eq!(refused["outcome"], "answered");
    assert_eq!(refused["ok"], false);
    assert_eq!(refused["error"], "unknown command 'nope'");
}

#[tokio::test]
async fn results_match_by_id_out_of_order_and_a_silent_page_times_out() {
    let daemon = OwnedDaemon::start().await;
    let mut page = connect(&daemon, "p", false).await;
    let first = spawn_command(daemon.port(), "p", "snapshot", None);
    let first_command = page.next_command(BOUND).await.unwrap();
    let second = spawn_command(daemon.port(), "p", "query", None);
    let second_command = page.next_command(BOUND).await.unwrap();
    assert_ne!(first_command.id, second_command.id);
    page.answer(&second_command, true, json!("second")).await;
    page.answer(&first_command, true, json!("first")).await;
    assert_eq!(first.await.unwrap()["result"], "first");
    assert_eq!(second.await.unwrap()["result"], "second");

    let silent = BridgeClient::new(daemon.port())
        .command(
            Some("p"),
            "query",
            json!({}),
            Some(Duration::from_millis(300)),
        )
        .await;
    assert_eq!(silent["outcome"], "timed_out", "{silent}");
    let late = page.next_command(BOUND).await.unwrap();
    page.answer(&late, true, json!("too late")).await;
    let client = BridgeClient::new(daemon.port());
    poll::until("the late result counted as unmatched", BOUND, async || {
        (client.session("p").await?["counters"]["unmatchedResults"] == 1).then_some(())
    })
    .await;
}

/// H4.4 through its gate scenario
/// (`gates::rows::hop4::h4_4_reaped_session::reaped_session_is_revived`): a session idle past the
/// reaper bound is revived by the next command, which is answered; control: under the default bound
/// a fresh session is not idle and revives nothing.
#[tokio::test]
async fn h4_4_the_reaper_marks_a_quiet_session_idle_and_the_next_command_revives_it() {
    common::row_meets_target("H4.4").await;
}

/// Finer than H4.4: the page itself is told it went idle and that it is active again, before the
/// command that revived it; reaping never closes the socket.
#[tokio::test]
async fn the_reaper_tells_the_page_it_is_idle_and_then_active_again() {
    let daemon = OwnedDaemon::builder()
        .env("RETICLE_SESSION_IDLE_MS", "300")
        .start()
        .await;
    let client = BridgeClient::new(daemon.port());
    let mut page = connect(&daemon, "quiet", false).await;
    let told = page
        .next_command(BOUND)
        .await
        .expect("the page is told it is idle");
    assert_eq!(told.name, "presenter");
    assert_eq!(told.args["state"], "ended");
    poll::until("/status to list the session idle", BOUND, async || {
        let status = client.status().await;
        (status["sessions"][0]["idle"] == true).then_some(())
    })
    .await;
    assert_eq!(
        client.status().await["sessionCount"],
        1,
        "reaping never closes"
    );

    let waiting = spawn_command(daemon.port(), "quiet", "query", None);
    let revive = page.next_command(BOUND).await.unwrap();
    assert_eq!(revive.name, "presenter");
    assert_eq!(revive.args["state"], "active");
    let command = page.next_command(BOUND).await.unwrap();
    assert_eq!(command.name, "query");
    page.answer(&command, true, json!({"elements": []})).await;
    let answer = waiting.await.unwrap();
    assert_eq!(answer["outcome"], "answered");
    assert_eq!(answer["revived"], true, "{answer}");
}

#[tokio::test]
async fn two_sessions_and_closing_one_leaves_the_other_drivable() {
    let daemon = OwnedDaemon::start().await;
    let client = BridgeClient::new(daemon.port());
    let first = connect(&daemon, "one", true).await;
    let _second = connect(&daemon, "two", true).await;
    assert_eq!(client.status().await["sessionCount"], 2);
    let ambiguous = client.command(None, "query", json!({}), None).await;
    assert_eq!(
        ambiguous["httpStatus"], 409,
        "two pages: the caller must choose: {ambiguous}"
    );
    first.close().await;
    poll::until("one session left", BOUND, async || {
        (client.status().await["sessionCount"] == 1).then_some(())
    })
    .await;
    let answer = client.command(None, "query", json!({}), None).await;
    assert_eq!(answer["outcome"], "answered", "{answer}");
    let gone = client.command(Some("one"), "query", json!({}), None).await;
    assert_eq!(gone["httpStatus"], 404);
}

#[tokio::test]
async fn a_connected_page_holds_off_idle_shutdown_and_its_departure_releases_it() {
    let mut daemon = OwnedDaemon::builder()
        .env("RETICLE_IDLE_SHUTDOWN_MS", "1500")
        .env("RETICLE_HEARTBEAT_MS", "50")
        .start()
        .await;
    let page = connect(&daemon, "holding", true).await;
    let log = daemon.log_path();
    let beats = |log: &std::path::Path| {
        std::fs::read_to_string(log)
            .unwrap_or_default()
            .matches("\"event\":\"daemon_alive\"")
            .count()
    };
    let start = beats(&log);
    // Sixty beats of 50 ms is twice the idle bound.
    poll::until("sixty more heartbeats", BOUND * 2, async || {
        (beats(&log) >= start + 60).then_some(())
    })
    .await;
    assert!(
        !daemon.has_exited(),
        "idle shutdown fired under a live page"
    );
    // Control: once the page leaves, idle shutdown fires.
    page.close().await;
    drop(page);
    poll::until("idle shutdown after the page left", BOUND, async || {
        daemon.has_exited().then_some(())
    })
    .await;
}

#[tokio::test]
async fn daemon_shutdown_closes_pages_1001() {
    let daemon = OwnedDaemon::start().await;
    let mut page = connect(&daemon, "p", true).await;
    daemon.signal(nix::sys::signal::Signal::SIGTERM);
    let (code, reason) = page.closed(BOUND).await.expect("closed");
    assert_eq!(code, Some(1001), "{reason}");
}
