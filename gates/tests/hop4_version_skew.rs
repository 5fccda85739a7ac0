//! Version skew (H4.1) and newer SDKs: a hello for another protocol version is closed 1008 with
//! a reason naming both versions, and the refused page shows in `/status` and `reticle status`;
//! a newer SDK speaking protocol 1 with extra fields and event types it invented is accepted,
//! its extra keys stripped and its unknown events stored and counted, never dropped.

use std::time::Duration;

mod common;

use gates::history::OpType;
use harness::{BridgeClient, OwnedDaemon, WirePage, poll};
use serde_json::json;

const BOUND: Duration = Duration::from_secs(10);
const ORIGIN: Option<&str> = Some("http://localhost:5173");

/// H4.1 through its gate scenario (`gates::rows::hop4::h4_1_version_mismatch::version_mismatch`): a
/// raw page's version 2 hello is closed 1008 naming both versions and listed by `reticle status`,
/// our SDK (its hello rewritten to version 2) warns once and backs off, and the control (the same
/// hello at version 1) becomes a session. Finer: `/status` records the refusal field by field.
#[tokio::test]
async fn h4_1_another_protocol_version_is_refused_naming_both_and_listed_in_status() {
    let ran = common::row_meets_target("H4.1").await;
    let ops = ran.history.ops();
    let status = &ops
        .iter()
        .find(|o| o.f == "bridge_status" && o.op_type == OpType::Ok)
        .expect("the scenario read /status")
        .value;
    assert_eq!(status["sessionCount"], 0, "{status}");
    let refused = &status["refused"][0];
    assert_eq!(refused["kind"], "version_mismatch", "{status}");
    assert_eq!(refused["code"], 1008);
    assert_eq!(refused["sessionId"], "skewed-page");
    assert_eq!(refused["url"], "http://localhost:5173/checkout");
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
