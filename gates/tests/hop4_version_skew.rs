//! Version skew (H4.1) and newer SDKs: a hello for another protocol version is closed 1008 with
//! a reason naming both versions, and the refused page shows in `/status` and `reticle status`;
//! a newer SDK speaking protocol 1 with extra fields and event types it invented is accepted,
//! its extra keys stripped and its unknown events stored and counted, never dropped. A peer or
//! page on another wire contract is told to the agent (`version_skew`, `versionSkew`) with its fix.

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

/// Opens `GET /mcp/sse` announcing a peer on `version` and `contract` (as the reference's proxy
/// does, and ours), waits for the stream's first bytes, and drops it.
async fn announce_peer(port: u16, version: &str, contract: &str) {
    let url =
        format!("http://127.0.0.1:{port}/mcp/sse?peerVersion={version}&peerContract={contract}");
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let mut response = client.get(url).send().await.expect("the stream opens");
    assert_eq!(response.status(), 200);
    let first = tokio::time::timeout(BOUND, response.chunk()).await;
    assert!(matches!(first, Ok(Ok(Some(_)))), "the stream speaks first");
}

/// Version skew, told where an agent looks: `/status` names this build's wire contract; a peer
/// announcing another contract on its stream reaches the agent on its next tool result, once, as
/// `version_skew` (pair `daemon`, naming `reticle stop`); a page whose SDK speaks another
/// contract is listed with `versionSkew` naming the version and the fix. Controls: a peer on the
/// daemon's own contract and a page with none (the published 2.0.0 names neither) say nothing.
#[tokio::test]
async fn a_peer_or_page_on_another_contract_is_told_to_the_agent_with_its_fix() {
    let daemon = OwnedDaemon::start().await;
    let port = daemon.port();
    let status: serde_json::Value = reqwest::get(format!("http://127.0.0.1:{port}/status"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let contract = status["contract"].as_str().expect("a contract").to_string();
    assert_eq!(contract, reticle::wire::CONTRACT);
    let version = status["version"].as_str().unwrap().to_string();

    let options = harness::ProxyOptions::new(port, daemon.state_dir());
    let mut agent = harness::RawMcp::start(options);
    agent.initialize().await;
    let mut sessions = async || {
        let id = agent
            .request(
                "tools/call",
                json!({"name": "reticle_sessions", "arguments": {}}),
            )
            .await;
        let answer = agent.answer(&id, BOUND).await.expect("answered");
        answer["result"]["structuredContent"].clone()
    };
    announce_peer(port, &version, &contract).await;
    assert!(
        sessions().await.get("version_skew").is_none(),
        "the same contract says nothing"
    );

    announce_peer(port, "0.0.1", "deadbeefdead").await;
    let told = sessions().await;
    let skew = &told["version_skew"];
    assert_eq!(skew["pair"], "daemon", "{told}");
    let action = skew["action"].as_str().unwrap();
    assert!(
        action.contains("0.0.1") && action.contains("reticle stop"),
        "{action}"
    );
    assert!(sessions().await.get("version_skew").is_none(), "told once");

    let token = daemon.token();
    let mut stale = harness::wire_page::hello("stale-sdk", Some(&token));
    stale["sdkVersion"] = json!("0.0.1");
    stale["contract"] = json!("deadbeefdead");
    let mut current = harness::wire_page::hello("current-sdk", Some(&token));
    current["sdkVersion"] = json!(version);
    current["contract"] = json!(contract);
    let published = harness::wire_page::hello("published-sdk", Some(&token));
    let mut pages = Vec::new();
    for hello in [&stale, &current, &published] {
        let page = WirePage::open(port, ORIGIN).await.unwrap();
        page.send_json(hello).await;
        pages.push(page);
    }
    let listed = poll::until("three pages listed", BOUND, async || {
        let answer = sessions().await;
        (answer["count"] == 3).then_some(answer)
    })
    .await;
    let entry = |id: &str| {
        listed["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["sessionId"] == id)
            .cloned()
            .unwrap()
    };
    let said = entry("stale-sdk")["versionSkew"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(said.contains("the page is 0.0.1"), "{said}");
    assert!(
        said.contains("@reticlehq/") && said.contains("restart"),
        "{said}"
    );
    assert!(entry("current-sdk").get("versionSkew").is_none());
    assert!(entry("published-sdk").get("versionSkew").is_none());
}
