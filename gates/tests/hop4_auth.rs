//! The bridge's auth tiers, through a real daemon and real sockets: the hello's token (an
//! unauthenticated hello is refused, an authenticated one accepted), the upgrade's Origin
//! (loopback passes, a foreign site is refused, opaque origins pass only when listed verbatim:
//! H4.5), a missing Origin only with the token, another project's page told which project this
//! daemon serves (H4.2), and a daemon bound beyond loopback refusing to start without a token.

use std::time::Duration;

mod common;

use gates::history::OpType;
use harness::wire_page::OpenError;
use harness::{BridgeClient, OwnedDaemon, WirePage, poll};
use serde_json::json;

const BOUND: Duration = Duration::from_secs(10);
const LOOPBACK: Option<&str> = Some("http://127.0.0.1:5173");

async fn wait_session(client: &BridgeClient, id: &str) {
    poll::until(&format!("session {id} in /status"), BOUND, async || {
        client.session(id).await.map(|_| ())
    })
    .await;
}

#[tokio::test]
async fn an_unauthenticated_hello_is_refused_and_an_authenticated_one_accepted() {
    let daemon = OwnedDaemon::start().await;
    let client = BridgeClient::new(daemon.port());
    let token = daemon.token();

    let mut anonymous = WirePage::open(daemon.port(), LOOPBACK).await.unwrap();
    anonymous.hello("no-token", None).await;
    let (code, reason) = anonymous.closed(BOUND).await.expect("closed");
    assert_eq!(code, Some(1008));
    assert!(reason.starts_with("authentication failed"), "{reason}");
    assert!(reason.contains("no token"), "{reason}");

    let mut wrong = WirePage::open(daemon.port(), LOOPBACK).await.unwrap();
    wrong.hello("wrong-token", Some("0000")).await;
    let (code, reason) = wrong.closed(BOUND).await.expect("closed");
    assert_eq!(code, Some(1008));
    assert!(reason.contains("wrong token"), "{reason}");

    // Control: the same page with the daemon's token becomes a session.
    let mut good = WirePage::open(daemon.port(), LOOPBACK).await.unwrap();
    good.hello("with-token", Some(&token)).await;
    wait_session(&client, "with-token").await;
    let status = client.status().await;
    assert_eq!(status["sessionCount"], 1, "{status}");
    assert_eq!(status["sessions"][0]["id"], "with-token");
    assert!(status["sessions"][0]["connectedAt"].is_string());
    assert!(status["sessions"][0]["lastSeenMs"].is_u64());
    let refused: Vec<_> = status["refused"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kind"].clone())
        .collect();
    assert_eq!(
        refused,
        [json!("auth_failed"), json!("auth_failed")],
        "{status}"
    );
    assert!(
        good.next(Duration::from_millis(50)).await.is_none(),
        "no ack, no close"
    );
}

#[tokio::test]
async fn the_token_can_come_from_reticle_token() {
    let daemon = OwnedDaemon::builder()
        .env("RETICLE_TOKEN", "a-token-from-the-environment")
        .start()
        .await;
    let client = BridgeClient::new(daemon.port());
    let page = WirePage::open(daemon.port(), LOOPBACK).await.unwrap();
    page.hello("env-token", Some("a-token-from-the-environment"))
        .await;
    wait_session(&client, "env-token").await;
    // Control: the provisioned file's token is not the one in force.
    let mut other = WirePage::open(daemon.port(), LOOPBACK).await.unwrap();
    other.hello("file-token", Some("not-it")).await;
    assert_eq!(other.closed(BOUND).await.unwrap().0, Some(1008));
}

#[tokio::test]
async fn a_foreign_origin_is_refused_at_the_upgrade_and_loopback_is_not() {
    let daemon = OwnedDaemon::start().await;
    let client = BridgeClient::new(daemon.port());
    let refused = WirePage::open(daemon.port(), Some("http://evil.example")).await;
    let Err(OpenError::Refused { status, body }) = refused else {
        panic!("a foreign origin must be refused, got {:?}", refused.err());
    };
    assert_eq!(status, 403);
    assert!(body.contains("evil.example"), "{body}");
    let status = client.status().await;
    assert_eq!(status["refused"][0]["kind"], "origin_refused", "{status}");
    assert_eq!(status["refused"][0]["origin"], "http://evil.example");
    // Control: loopback origins, names and addresses, upgrade.
    for origin in [
        "http://localhost:3000",
        "http://127.0.0.1:8080",
        "http://[::1]:1",
    ] {
        assert!(
            WirePage::open(daemon.port(), Some(origin)).await.is_ok(),
            "{origin}"
        );
    }
}

#[tokio::test]
async fn a_missing_origin_is_let_in_only_to_present_the_token() {
    let daemon = OwnedDaemon::start().await;
    let client = BridgeClient::new(daemon.port());
    let mut bare = WirePage::open(daemon.port(), None)
        .await
        .expect("upgrade without Origin");
    bare.hello("bare", None).await;
    assert_eq!(bare.closed(BOUND).await.unwrap().0, Some(1008));
    let null = WirePage::open(daemon.port(), Some("null")).await.unwrap();
    null.hello("sandboxed", Some(&daemon.token())).await;
    wait_session(&client, "sandboxed").await;
    let bare = WirePage::open(daemon.port(), None).await.unwrap();
    bare.hello("bare-with-token", Some(&daemon.token())).await;
    wait_session(&client, "bare-with-token").await;
}

/// H4.5 through its gate scenario
/// (`gates::rows::hop4::h4_5_opaque_origins::opaque_origins_accepted`): with
/// `RETICLE_ALLOWED_ORIGINS=tauri://localhost,file://` a page from each, with the token, is a
/// drivable session; an unlisted opaque origin is refused; control: a daemon without the list
/// refuses both.
#[tokio::test]
async fn h4_5_opaque_origins_are_accepted_when_listed_verbatim() {
    common::row_meets_target("H4.5").await;
}

/// H4.2 through its gate scenario
/// (`gates::rows::hop4::h4_2_another_projects_page::another_projects_page`): project beta's page,
/// with beta's real token, at alpha's daemon is closed 1008 naming both projects; controls: each
/// page is admitted by its own project's daemon. Finer: the sentence tells the user what to do.
#[tokio::test]
async fn h4_2_another_projects_page_is_told_which_project_answers() {
    let ran = common::row_meets_target("H4.2").await;
    let refused = ran
        .history
        .ops()
        .into_iter()
        .rfind(|o| o.f == "hello" && o.op_type == OpType::Fail)
        .expect("the hello was refused");
    let reason = refused.value["reason"].as_str().unwrap_or("");
    assert!(
        reason.contains("serves project alpha, not beta"),
        "{reason}"
    );
    assert!(reason.contains("reticle stop"), "{reason}");
}

/// A wrong token without a project claim gets the plain sentence, never a project guess.
#[tokio::test]
async fn a_wrong_token_without_a_project_claim_is_not_told_about_projects() {
    let daemon = OwnedDaemon::start().await;
    let client = BridgeClient::new(daemon.port());
    let mut ours = harness::wire_page::hello("ours", Some(&daemon.token()));
    ours["projectId"] = json!("alpha");
    let page = WirePage::open(daemon.port(), LOOPBACK).await.unwrap();
    page.send_json(&ours).await;
    wait_session(&client, "ours").await;
    let mut page = WirePage::open(daemon.port(), LOOPBACK).await.unwrap();
    page.hello("anon", Some("nope")).await;
    let (code, reason) = page.closed(BOUND).await.unwrap();
    assert_eq!(code, Some(1008));
    assert!(reason.contains("wrong token"), "{reason}");
    assert!(!reason.contains("project"), "{reason}");
}

#[tokio::test]
async fn a_daemon_beyond_loopback_without_a_token_refuses_to_start() {
    let state = tempfile::tempdir().unwrap();
    let port = harness::free_port().to_string();
    let mut serve =
        harness::cli::command(state.path(), &["serve", "--foreground", "--port", &port]);
    serve
        .env(reticle::config::env::HOST, "0.0.0.0")
        .env_remove(reticle::config::env::TOKEN);
    let ran = assert_cmd::Command::from_std(serve)
        .timeout(harness::cli::CLI_BOUND)
        .output()
        .unwrap();
    assert!(!ran.status.success());
    let said = String::from_utf8_lossy(&ran.stderr);
    assert!(said.contains("RETICLE_TOKEN"), "{said}");
    assert!(said.contains("beyond loopback"), "{said}");
    // Control: the same with a token starts (and is stopped at once).
    let daemon = OwnedDaemon::builder()
        .env("RETICLE_HOST", "0.0.0.0")
        .env("RETICLE_TOKEN", "secret")
        .start()
        .await;
    assert!(daemon.status().await.is_some());
}

#[tokio::test]
async fn commands_reach_only_an_accepted_page() {
    let daemon = OwnedDaemon::start().await;
    let client = BridgeClient::new(daemon.port());
    let none = client.command(None, "query", json!({}), None).await;
    assert_eq!(none["httpStatus"], 404, "{none}");
    let page = WirePage::open_with(
        daemon.port(),
        LOOPBACK,
        Some(harness::wire_page::echo_responder()),
    )
    .await
    .unwrap();
    page.hello("p", Some(&daemon.token())).await;
    wait_session(&client, "p").await;
    let answer = client
        .command(None, "query", json!({"role": "button"}), None)
        .await;
    assert_eq!(answer["outcome"], "answered", "{answer}");
    assert_eq!(answer["result"]["echo"], "query");
    assert_eq!(answer["result"]["args"]["role"], "button");
}
