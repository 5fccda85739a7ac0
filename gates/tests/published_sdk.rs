//! Compatibility with the SDK apps already ship: the published `@reticlehq/browser` 2.0.0
//! (protocol 1), installed from the npm registry and bundled at test time, loaded in Chromium
//! against our daemon with its token. Through the bridge it answers `snapshot`, `query`, `act`
//! and `state_read`, and its console and network events arrive. Its extra behaviours (a
//! `present: false` page makes no fetch of its own; no Origin-less hello) need nothing special.

use std::time::Duration;

use harness::published_sdk::PublishedSdk;
use harness::{BridgeClient, Browser, FixtureApp, OwnedDaemon, poll};
use serde_json::{Value, json};

const BOUND: Duration = Duration::from_secs(20);

const PAGE: &str = r#"<!doctype html>
<html><head><title>Published SDK</title></head>
<body>
  <h1>Published SDK 2.0.0</h1>
  <button id="inc" onclick="window.clicks=(window.clicks||0)+1">Add to cart</button>
  <label>Coupon <input placeholder="CODE"></label>
  <script type="module">
    import { reticle, registerStore } from '/published/reticle-sdk.mjs';
    const q = new URLSearchParams(location.search);
    registerStore('cart', () => ({ items: 3, total: 12.5 }));
    reticle.connect({
      url: `ws://127.0.0.1:${q.get('port')}/reticle`,
      token: q.get('token'), session: 'published-1', present: false,
    });
    window.__r = reticle;
  </script>
</body></html>"#;

fn ok_result(answer: &Value) -> &Value {
    assert_eq!(answer["outcome"], "answered", "{answer}");
    assert_eq!(answer["ok"], true, "{answer}");
    &answer["result"]
}

#[tokio::test]
async fn the_published_2_0_0_sdk_is_driven_through_our_bridge() {
    let sdk = tokio::task::spawn_blocking(PublishedSdk::build)
        .await
        .unwrap()
        .unwrap_or_else(|why| panic!("could not build the published SDK bundle: {why}"));
    let daemon = OwnedDaemon::start().await;
    let client = BridgeClient::new(daemon.port());
    let app = FixtureApp::builder()
        .mount("published", sdk.dir())
        .start()
        .await;
    app.page("/published.html", PAGE);
    let browser = Browser::launch().await.expect("chromium launches");
    let url = app.url(&format!(
        "/published.html?port={}&token={}",
        daemon.port(),
        daemon.token()
    ));
    let tab = browser.open(&url).await.unwrap();
    poll::until("the published SDK's session", BOUND, async || {
        client.session("published-1").await.map(|_| ())
    })
    .await;
    let session = client.session("published-1").await.unwrap();
    assert_eq!(session["identity"]["title"], "Published SDK", "{session}");

    let snapshot = client
        .command(
            Some("published-1"),
            "snapshot",
            json!({"mode": "interactive"}),
            None,
        )
        .await;
    let tree = ok_result(&snapshot)["tree"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        tree.contains("Add to cart") && tree.contains("(ref=e"),
        "{tree}"
    );

    let query = client
        .command(
            Some("published-1"),
            "query",
            json!({"role": "button", "name": "Add to cart"}),
            None,
        )
        .await;
    let element = ok_result(&query)["elements"][0]["ref"]
        .as_str()
        .unwrap_or_else(|| panic!("{query}"))
        .to_string();
    let act = client
        .command(
            Some("published-1"),
            "act",
            json!({"ref": element, "action": "click"}),
            None,
        )
        .await;
    assert_eq!(ok_result(&act)["dispatched"], true, "{act}");
    let clicks: u32 = tab.eval("window.clicks || 0").await.unwrap();
    assert_eq!(clicks, 1);

    let state = client
        .command(
            Some("published-1"),
            "state_read",
            json!({"store": "cart", "path": "total"}),
            None,
        )
        .await;
    assert_eq!(ok_result(&state)["value"], 12.5, "{state}");

    // The published SDK's refusals come back as the page's answer, not as lost observations.
    let unknown = client
        .command(Some("published-1"), "nope", json!({}), None)
        .await;
    assert_eq!(unknown["outcome"], "answered");
    assert_eq!(unknown["ok"], false);
    assert!(
        unknown["error"].as_str().unwrap().contains("nope"),
        "{unknown}"
    );

    tab.eval::<Value>(
        "console.error('published console', 7); fetch('/api/health').then(r => r.status)",
    )
    .await
    .unwrap();
    poll::until("its console and network events", BOUND, async || {
        let read = client.events("published-1", None).await;
        let events = read["events"].as_array()?;
        let console = events.iter().any(|e| {
            e["type"] == "console.error" && e["data"].to_string().contains("published console")
        });
        let network = events.iter().any(|e| {
            e["type"] == "net.request"
                && e["data"]["url"]
                    .as_str()
                    .unwrap_or("")
                    .contains("/api/health")
                && e["data"]["status"] == 200
        });
        (console && network).then_some(())
    })
    .await;
    let counters = client.session("published-1").await.unwrap()["counters"].clone();
    assert_eq!(counters["eventsDropped"], 0, "{counters}");
}
