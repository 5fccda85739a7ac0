//! Compatibility with the SDK apps already ship: the published `@reticlehq/browser` 2.0.0
//! (protocol 1), installed from the npm registry and bundled at test time, loaded in Chromium
//! against our daemon with its token. Through the bridge it answers `snapshot`, `query`, `act`
//! and `state_read`, and its console and network events arrive. Its extra behaviours (a
//! `present: false` page makes no fetch of its own; no Origin-less hello) need nothing special.
//! A second document on a live page's session id (S9) is refused `session in use`; the published
//! SDK takes no id of its own, so it stays refused while the first page lives, and the first page
//! keeps its session: never a silent swap (docs/sdk-compat.md).

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

/// A daemon, the fixture app serving [`PAGE`] with the published SDK bundled, and Chromium.
struct Stack {
    _sdk: PublishedSdk,
    _daemon: OwnedDaemon,
    _app: FixtureApp,
    client: BridgeClient,
    browser: Browser,
    /// [`PAGE`], connecting to the daemon with its token.
    url: String,
}

impl Stack {
    async fn start() -> Self {
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
        Self {
            _sdk: sdk,
            _daemon: daemon,
            _app: app,
            client,
            browser,
            url,
        }
    }

    /// Opens [`PAGE`] in a tab and waits until its session `published-1` is connected.
    async fn open_connected(&self) -> harness::Tab {
        let tab = self.browser.open(&self.url).await.unwrap();
        poll::until("the published SDK's session", BOUND, async || {
            self.client.session("published-1").await.map(|_| ())
        })
        .await;
        tab
    }
}

#[tokio::test]
async fn the_published_2_0_0_sdk_is_driven_through_our_bridge() {
    let stack = Stack::start().await;
    let client = &stack.client;
    let tab = stack.open_connected().await;
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

/// Adds a button named `name` to the page, so a command's answer says which document it reached.
async fn mark(tab: &harness::Tab, name: &str) {
    tab.eval::<Value>(&format!(
        "(() => {{ const b = document.createElement('button'); b.textContent = {}; document.body.append(b); return true; }})()",
        json!(name)
    ))
    .await
    .unwrap();
}

#[tokio::test]
async fn a_second_published_page_on_a_live_session_id_is_refused_never_swapped_in() {
    let stack = Stack::start().await;
    let client = &stack.client;
    let first = stack.open_connected().await;
    mark(&first, "Document: first").await;
    // A duplicate of the tab: the same page, the same session id.
    let second = stack.browser.open(&stack.url).await.unwrap();
    mark(&second, "Document: second").await;
    // 2.0.0 reads no close reason: it retries every second, and is refused each time.
    let refusals = poll::until("the second page refused twice", BOUND, async || {
        let refused = client.status().await["refused"].as_array()?.clone();
        let in_use: Vec<Value> = refused
            .into_iter()
            .filter(|r| r["kind"] == "session_in_use" && r["sessionId"] == "published-1")
            .collect();
        (in_use.len() >= 2).then_some(in_use)
    })
    .await;
    assert_eq!(refusals[0]["code"], 1008, "{refusals:?}");
    let session = client.session("published-1").await.unwrap();
    assert_eq!(
        session["counters"]["links"], 1,
        "never handed over: {session}"
    );
    let answer = client
        .command(
            Some("published-1"),
            "query",
            json!({"role": "button"}),
            None,
        )
        .await;
    let elements = ok_result(&answer)["elements"].to_string();
    assert!(
        elements.contains("Document: first") && !elements.contains("Document: second"),
        "the command landed in the first page: {elements}"
    );
    // Once the first page is gone, the second gets the session on its next retry.
    first.close().await.unwrap();
    poll::until("the second page holds the session", BOUND, async || {
        let answer = client
            .try_command(
                Some("published-1"),
                "query",
                json!({"role": "button"}),
                None,
            )
            .await
            .ok()?;
        answer["result"]["elements"]
            .to_string()
            .contains("Document: second")
            .then_some(())
    })
    .await;
}
