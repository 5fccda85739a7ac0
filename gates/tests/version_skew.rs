//! Version skew (H4.1) and newer SDKs: a hello for another protocol version is closed 1008 with
//! a reason naming both versions, and the refused page shows in `/status` and `reticle status`;
//! a newer SDK speaking protocol 1 with extra fields and event types it invented is accepted,
//! its extra keys stripped and its unknown events stored and counted, never dropped.

use std::time::Duration;

use harness::cli::run;
use harness::{BridgeClient, OwnedDaemon, WirePage, poll};
use serde_json::json;

const BOUND: Duration = Duration::from_secs(10);
const ORIGIN: Option<&str> = Some("http://localhost:5173");

#[tokio::test]
async fn h4_1_another_protocol_version_is_refused_naming_both_and_listed_in_status() {
    let daemon = OwnedDaemon::start().await;
    let client = BridgeClient::new(daemon.port());
    let mut hello = harness::wire_page::hello("skewed-page", Some(&daemon.token()));
    hello["protocolVersion"] = json!(2);
    hello["url"] = json!("http://localhost:5173/checkout");
    let mut page = WirePage::open(daemon.port(), ORIGIN).await.unwrap();
    page.send_json(&hello).await;
    let (code, reason) = page
        .closed(BOUND)
        .await
        .expect("the bridge closes the socket");
    assert_eq!(code, Some(1008));
    assert!(reason.contains("page speaks 2"), "{reason}");
    assert!(reason.contains("daemon speaks 1"), "{reason}");

    let status = client.status().await;
    assert_eq!(status["sessionCount"], 0);
    let refused = &status["refused"][0];
    assert_eq!(refused["kind"], "version_mismatch", "{status}");
    assert_eq!(refused["code"], 1008);
    assert_eq!(refused["sessionId"], "skewed-page");
    assert_eq!(refused["url"], "http://localhost:5173/checkout");

    let port = daemon.port().to_string();
    let said = run(daemon.state_dir(), &["status", "--port", &port]).await;
    assert!(said.ok(), "{said:?}");
    assert!(
        said.stdout.contains("refused skewed-page"),
        "{}",
        said.stdout
    );
    assert!(said.stdout.contains("version_mismatch"), "{}", said.stdout);
    assert!(said.stdout.contains("page speaks 2"), "{}", said.stdout);

    // Control: the same page at version 1 is accepted and listed as a session.
    hello["protocolVersion"] = json!(1);
    let page = WirePage::open(daemon.port(), ORIGIN).await.unwrap();
    page.send_json(&hello).await;
    poll::until("the v1 page to be a session", BOUND, async || {
        client.session("skewed-page").await.map(|_| ())
    })
    .await;
    let said = run(daemon.state_dir(), &["status", "--port", &port]).await;
    assert!(
        said.stdout.contains("session skewed-page"),
        "{}",
        said.stdout
    );
}

#[tokio::test]
async fn a_newer_protocol_1_sdk_is_accepted_with_its_extras_stripped_and_unknown_events_kept() {
    let daemon = OwnedDaemon::start().await;
    let client = BridgeClient::new(daemon.port());
    let mut hello = harness::wire_page::hello("newer", Some(&daemon.token()));
    hello["sdkVersion"] = json!("9.1.0");
    hello["contract"] = json!("fingerprint-abc");
    hello["redactKeys"] = json!(["password"]);
    let mut page = WirePage::open(daemon.port(), ORIGIN).await.unwrap();
    page.send_json(&hello).await;
    page.event("newer", "quantum.flux", json!({"level": 3}))
        .await;
    let mut with_extras =
        harness::wire_page::event("newer", "console.log", json!({"message": "hi"}));
    with_extras["event"]["documentId"] = json!("d1");
    with_extras["event"]["seq"] = json!(41);
    with_extras["envelopeExtra"] = json!(true);
    page.send_json(&with_extras).await;

    let events = poll::until("both events stored", BOUND, async || {
        let read = client.events("newer", None).await;
        (read["events"].as_array()?.len() == 2).then_some(read)
    })
    .await;
    assert_eq!(events["events"][0]["type"], "quantum.flux");
    assert_eq!(events["events"][0]["data"]["level"], 3);
    assert_eq!(events["events"][1]["pageSeq"], 41);
    assert!(events["events"][1].get("documentId").is_none());
    let session = client.session("newer").await.unwrap();
    assert_eq!(session["identity"]["sdkVersion"], "9.1.0");
    assert_eq!(session["counters"]["unknownEventTypes"], 1, "{session}");
    assert!(
        page.next(Duration::from_millis(50)).await.is_none(),
        "still open"
    );
}
