//! Hop 4's session ids when the app names its own: a page whose `connect()` passes a fixed
//! `session` (ours, or the published 2.0.0 whose README shows `'my-app'`) and whose URL asks for
//! another (`__reticle_session`, as `reticle verify` opens its tabs) is adopted under the asked
//! id, with both SDKs, and `reticle verify` on such an app exits 0. The published SDK's `auto`
//! id changes on every load: the daemon's own reload and navigation ask the new document for the
//! session's id, so the session follows the tab; when a page drops that parameter anyway, the
//! note names the id its new document took instead of blaming the SDK.
//! Negative controls: a person's tab holding the app's fixed id keeps it and answers as itself,
//! and a third tab asking for a live page's id does not take it; a navigation that does not ask
//! (the raw bridge command) shows the published SDK does change its id without the daemon.

mod support;

use std::time::Duration;

use gates::scenarios::verify_rig::VerifyRig;
use harness::published_sdk::PublishedSdk;
use harness::{BridgeClient, FixtureApp, binaries, poll};
use reticle::wire::session_param::with_session;
use serde_json::{Value, json};
use support::tabs::{answering_title, wait_answering};
use support::tools::ToolRig;

const BOUND: Duration = Duration::from_secs(30);

/// Sets the document's title from `?title=` before anything connects.
const TITLE_FROM_QUERY: &str = "<script>document.title = new URLSearchParams(location.search).get('title') || 'untitled';</script>";

/// A page connecting our SDK with the fixed session `'my-app'`.
fn our_fixed_page() -> String {
    format!(
        r#"<!doctype html><html><head><title>t</title>{TITLE_FROM_QUERY}</head>
<body><h1>ours</h1>
<script type="module">
  import * as reticle from '/sdk/reticle.js';
  const q = new URLSearchParams(location.search);
  reticle.connect({{ port: Number(q.get('port')), token: q.get('token'), session: 'my-app', present: false }});
</script></body></html>"#
    )
}

/// A page connecting the published 2.0.0 SDK as its README shows (`url`, `token`, `session`),
/// with `session` the JS expression given; `before` runs first (a router's URL rewrite, say).
fn published_page(session: &str, before: &str) -> String {
    format!(
        r#"<!doctype html><html><head><title>t</title>{TITLE_FROM_QUERY}</head>
<body><h1>published</h1>
<button onclick="document.getElementById('out').textContent = 'Added'">Add</button>
<p id="out"></p>
<script type="module">
  import {{ reticle }} from '/published/reticle-sdk.mjs';
  const q = new URLSearchParams(location.search);
  {before}
  reticle.connect({{
    url: `ws://127.0.0.1:${{q.get('port')}}/reticle`, token: q.get('token'),
    session: {session}, present: false,
  }});
</script></body></html>"#
    )
}

/// Builds the published SDK bundle and serves it at `/published/reticle-sdk.mjs`.
async fn serve_published(app: &FixtureApp) -> PublishedSdk {
    let sdk = tokio::task::spawn_blocking(PublishedSdk::build)
        .await
        .unwrap()
        .unwrap_or_else(|why| panic!("could not build the published SDK bundle: {why}"));
    let bundle = std::fs::read_to_string(sdk.bundle()).unwrap();
    app.file("/published/reticle-sdk.mjs", "text/javascript", bundle);
    sdk
}

/// `/status`'s entry for session `id`.
async fn listed(client: &BridgeClient, id: &str) -> Value {
    client.status().await["sessions"]
        .as_array()
        .and_then(|all| all.iter().find(|s| s["id"] == id).cloned())
        .unwrap_or_else(|| panic!("{id} is not listed"))
}

/// A person's tab holds the app's fixed id; verify's tab asks for `v1` in its URL and is
/// adopted as `v1`; a third tab asking for `v1` too takes nothing from either.
async fn adopted_without_taking(rig: &ToolRig, path: &str) {
    let bridge = BridgeClient::new(rig.daemon.port());
    let page = |title: &str| {
        rig.app.url(&format!(
            "{path}?port={}&token={}&title={title}",
            rig.daemon.port(),
            rig.daemon.token()
        ))
    };
    let _person = rig.browser.open(&page("person")).await.unwrap();
    wait_answering(&bridge, "my-app", "person").await;
    let _verify = rig
        .browser
        .open(&with_session(&page("verify"), "v1"))
        .await
        .unwrap();
    wait_answering(&bridge, "v1", "verify").await;
    assert_eq!(listed(&bridge, "v1").await["pageId"], "my-app");
    assert!(listed(&bridge, "my-app").await.get("pageId").is_none());
    // The control: the person's tab kept its own session, and answers as itself.
    assert_eq!(
        answering_title(&bridge, "my-app").await.as_deref(),
        Some("person")
    );
    // A third tab asking for the id a live page holds is refused it (and, its own fixed id
    // held too, refused that), never swapped in.
    let _third = rig
        .browser
        .open(&with_session(&page("third"), "v1"))
        .await
        .unwrap();
    poll::until("the third tab refused", BOUND, async || {
        let refused = bridge.status().await["refused"].as_array().cloned()?;
        refused
            .iter()
            .any(|r| {
                r["kind"] == "session_in_use"
                    && r["url"].as_str().is_some_and(|u| u.contains("title=third"))
            })
            .then_some(())
    })
    .await;
    assert_eq!(
        answering_title(&bridge, "v1").await.as_deref(),
        Some("verify")
    );
    assert_eq!(
        answering_title(&bridge, "my-app").await.as_deref(),
        Some("person")
    );
}

#[tokio::test]
async fn our_sdk_with_a_fixed_session_is_adopted_under_the_id_its_url_asks_for() {
    let rig = ToolRig::start(&[]).await;
    rig.app.page("/fixed.html", our_fixed_page());
    adopted_without_taking(&rig, "/fixed.html").await;
}

#[tokio::test]
async fn the_published_sdk_with_a_fixed_session_is_adopted_under_the_id_its_url_asks_for() {
    let rig = ToolRig::start(&[]).await;
    let _sdk = serve_published(&rig.app).await;
    rig.app.page("/fixed.html", published_page("'my-app'", ""));
    adopted_without_taking(&rig, "/fixed.html").await;
}

#[tokio::test]
async fn verify_passes_on_an_app_whose_connect_names_its_own_session_with_our_sdk() {
    let rig = VerifyRig::start().await.expect("the rig starts");
    rig.save(gates::scenarios::verify_rig::click_flow(
        "count",
        "counter-increment",
        "counter.changed",
        8000,
    ))
    .await
    .expect("the flow is saved");
    // The fixture app passes `session` from its query to connect(): a fixed id.
    let ran = rig
        .verify(&binaries::reticle(), &rig.url("&session=my-app"), &[])
        .await;
    assert_eq!(ran.code, Some(0), "{}", ran.said());
}

#[tokio::test]
async fn verify_passes_on_an_app_whose_connect_names_its_own_session_with_the_published_sdk() {
    let rig = VerifyRig::start().await.expect("the rig starts");
    let _sdk = serve_published(&rig.app).await;
    rig.app.page("/pub.html", published_page("'my-app'", ""));
    rig.save(json!({
        "name": "add",
        "startPath": "/pub.html",
        "overwrite": true,
        "steps": [{"target": {"role": "button", "name": "Add"}, "action": "click",
                   "until": {"kind": "text", "contains": "Added"}, "timeout_ms": 8000}],
    }))
    .await
    .expect("the flow is saved");
    let url = rig.app.url(&format!(
        "/pub.html?port={}&token={}",
        rig.daemon.port(),
        rig.daemon.token()
    ));
    let ran = rig.verify(&binaries::reticle(), &url, &[]).await;
    assert_eq!(ran.code, Some(0), "{}", ran.said());
}

/// The only session reticle_sessions lists (waiting for one).
async fn only_session(rig: &ToolRig) -> String {
    poll::until("one session listed", BOUND, async || {
        let listed = rig.call("reticle_sessions", json!({})).await;
        match listed["sessions"].as_array()?.as_slice() {
            [only] => only["sessionId"].as_str().map(str::to_string),
            _ => None,
        }
    })
    .await
}

/// The published SDK's `auto` page, opened without any session in its URL; its session id.
async fn open_auto(rig: &ToolRig, before: &str) -> (harness::Tab, String) {
    rig.app.page("/auto.html", published_page("'auto'", before));
    rig.app
        .page("/auto-b.html", published_page("'auto'", before));
    let url = rig.app.url(&format!(
        "/auto.html?port={}&token={}&title=A",
        rig.daemon.port(),
        rig.daemon.token()
    ));
    let tab = rig.browser.open(&url).await.unwrap();
    let id = only_session(rig).await;
    *rig.default_session.lock().unwrap() = Some(id.clone());
    (tab, id)
}

#[tokio::test]
async fn the_published_sdks_auto_session_follows_the_tab_across_the_daemons_reloads() {
    let rig = ToolRig::start(&[]).await;
    let _sdk = serve_published(&rig.app).await;
    let (_tab, id) = open_auto(&rig, "").await;
    let bridge = BridgeClient::new(rig.daemon.port());

    let reloaded = rig.ok("reticle_navigate", json!({"reload": true})).await;
    assert_eq!(reloaded["confirmed"], true, "{reloaded}");
    assert_eq!(only_session(&rig).await, id);
    let url_b = rig.app.url(&format!(
        "/auto-b.html?port={}&token={}&title=B",
        rig.daemon.port(),
        rig.daemon.token()
    ));
    let moved = rig.ok("reticle_navigate", json!({"url": url_b})).await;
    assert_eq!(moved["confirmed"], true, "{moved}");
    assert_eq!(answering_title(&bridge, &id).await.as_deref(), Some("B"));
    let again = rig.ok("reticle_navigate", json!({"reload": true})).await;
    assert_eq!(again["confirmed"], true, "{again}");
    assert_eq!(only_session(&rig).await, id);

    // The control: a navigation that does not ask for the id (the bare protocol command, to a
    // URL without the parameter) comes back under a new one: `auto` does change it.
    let plain = rig.app.url(&format!(
        "/auto.html?port={}&token={}&title=C",
        rig.daemon.port(),
        rig.daemon.token()
    ));
    bridge
        .command(Some(&id), "navigate", json!({"url": plain}), None)
        .await;
    let other = poll::until("the page back under another id", BOUND, async || {
        let now = only_session(&rig).await;
        (now != id).then_some(now)
    })
    .await;
    assert_eq!(answering_title(&bridge, &other).await.as_deref(), Some("C"));
}

#[tokio::test]
async fn a_page_that_drops_the_asked_id_is_named_with_the_id_it_took_not_blamed_on_the_sdk() {
    let rig = ToolRig::start(&[]).await;
    let _sdk = serve_published(&rig.app).await;
    // As a router that rewrites the URL before the SDK connects.
    let drop_param = "const u = new URL(location.href); u.searchParams.delete('__reticle_session'); history.replaceState(null, '', u);";
    let (_tab, id) = open_auto(&rig, drop_param).await;
    let reloaded = rig.ok("reticle_navigate", json!({"reload": true})).await;
    assert_eq!(reloaded["confirmed"], false, "{reloaded}");
    let note = reloaded["note"].as_str().unwrap_or_default();
    let other = only_session(&rig).await;
    assert_ne!(other, id);
    assert!(
        note.contains(&format!("connected as session '{other}'")),
        "{note}"
    );
    assert!(!note.contains("not load the Reticle SDK"), "{note}");
}
