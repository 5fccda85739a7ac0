//! Hop 4 across a tab's history, with Chromium's back/forward cache on (as in people's
//! browsers): a full-page navigation keeps the old document alive, frozen, with its socket still
//! answering pings. The tab's newest document must own its session, with our SDK (which lets go
//! on `pagehide` and takes the session back on `pageshow`) and with the published
//! `@reticlehq/browser` 2.0.0 (which does neither: the bridge hands the session to the newer
//! document when the holder is hidden and its script answers nothing). A first test proves the
//! cache is in effect here at all (the first document itself shown again, with
//! `pageshow.persisted`), beside the control that a new load of the same URL is told apart.
//! Negative controls: the stand-in bridge that keeps a
//! frozen holder (`RETICLE_TEST_STAND_IN_KEEP_FROZEN_HOLDER`) refuses the published SDK's newer
//! document, and so it does ours when our SDK's `pagehide` hand-over is taken out of it.

mod support;

use std::time::Duration;

use harness::published_sdk::PublishedSdk;
use harness::{BridgeClient, Browser, FixtureApp, SdkRig, Tab, poll};
use reticle::config::env;
use serde_json::{Value, json};
use support::tabs::{answering_title, wait_answering};

const BOUND: Duration = Duration::from_secs(30);

/// Counts the times the document was shown from the back/forward cache (`window.__restored`).
const RESTORE_COUNTER: &str = "<script>addEventListener('pageshow', (e) => { if (e.persisted) window.__restored = (window.__restored || 0) + 1; });</script>";

/// A page titled `title` connecting our SDK with the port, token and session of its query.
fn our_page(title: &str) -> String {
    format!(
        r#"<!doctype html><html><head><title>{title}</title>{RESTORE_COUNTER}</head>
<body><h1>{title}</h1>
<script type="module">
  import * as reticle from '/sdk/reticle.js';
  const q = new URLSearchParams(location.search);
  window.__connected = reticle.connect({{
    port: Number(q.get('port')), token: q.get('token'), session: q.get('session'), present: false,
  }});
</script></body></html>"#
    )
}

/// A page titled `title` connecting the published 2.0.0 SDK with a fixed session id, as its
/// README shows.
fn published_page(title: &str) -> String {
    format!(
        r#"<!doctype html><html><head><title>{title}</title>{RESTORE_COUNTER}</head>
<body><h1>{title}</h1>
<script type="module">
  import {{ reticle }} from '/published/reticle-sdk.mjs';
  const q = new URLSearchParams(location.search);
  reticle.connect({{
    url: `ws://127.0.0.1:${{q.get('port')}}/reticle`, token: q.get('token'),
    session: q.get('session'), present: false,
  }});
</script></body></html>"#
    )
}

/// The `session_in_use` refusals `/status` lists for `id`.
async fn in_use_refusals(client: &BridgeClient, id: &str) -> Vec<Value> {
    client.status().await["refused"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r["kind"] == "session_in_use" && r["sessionId"] == id)
        .collect()
}

/// How many times the tab's document was restored from the back/forward cache.
async fn restored(tab: &Tab) -> u32 {
    tab.eval("window.__restored || 0").await.unwrap_or(0)
}

/// Goes back in the tab's history.
async fn back(tab: &Tab) {
    tab.eval::<Value>("(() => { history.back(); return true; })()")
        .await
        .unwrap();
}

/// `url` with its path `/history/a.html` turned into `/history/b.html`.
fn page_b(url_a: &str) -> String {
    url_a.replace("/history/a.html", "/history/b.html")
}

#[tokio::test]
async fn the_back_forward_cache_is_in_effect_for_pages_served_as_a_dev_server_serves_them() {
    let app = FixtureApp::start().await;
    let browser = Browser::launch().await.expect("chromium launches");
    let plain = |title: &str| {
        format!(
            "<!doctype html><html><head><title>{title}</title>{RESTORE_COUNTER}</head><body>{title}</body></html>"
        )
    };
    app.history_page("/history/a.html", plain("A"));
    app.history_page("/history/b.html", plain("B"));
    let tab = browser.open(&app.url("/history/a.html")).await.unwrap();
    tab.eval::<Value>("(() => { window.__mark = 'first document'; return true; })()")
        .await
        .unwrap();
    tab.goto(&app.url("/history/b.html")).await.unwrap();
    // Back: the first document itself is shown again, from the cache.
    back(&tab).await;
    let shown = async || {
        poll::until("a.html shown", BOUND, async || {
            let title: String = tab.eval("document.title").await.ok()?;
            let state: String = tab.eval("document.readyState").await.ok()?;
            (title == "A" && state == "complete").then_some(())
        })
        .await;
        let mark: String = tab.eval("window.__mark || 'a new document'").await.unwrap();
        (restored(&tab).await, mark)
    };
    assert_eq!(shown().await, (1, "first document".to_string()));
    // The control: going to the same URL anew loads a new document, which the check tells apart.
    tab.goto(&app.url("/history/b.html")).await.unwrap();
    tab.goto(&app.url("/history/a.html")).await.unwrap();
    assert_eq!(shown().await, (0, "a new document".to_string()));
}

/// Opens `a.html` as session `id`, navigates the tab to `b.html` through the bridge's
/// `navigate` (a full-page navigation), and returns the tab once `b.html` answers for `id`.
async fn navigate_a_to_b(rig: &SdkRig, url_a: &str, id: &str) -> Tab {
    let tab = rig.browser.open(url_a).await.unwrap();
    wait_answering(&rig.client, id, "A").await;
    let sent = rig
        .client
        .command(Some(id), "navigate", json!({"url": page_b(url_a)}), None)
        .await;
    assert_eq!(sent["outcome"], "answered", "{sent}");
    wait_answering(&rig.client, id, "B").await;
    tab
}

/// The round trip every SDK must make: A, navigate to B (B owns the session), back to A
/// restored from the cache (A owns it again), never refused and never a second session.
async fn round_trip_through_history(rig: &SdkRig, url_a: &str, id: &str) {
    let tab = navigate_a_to_b(rig, url_a, id).await;
    back(&tab).await;
    wait_answering(&rig.client, id, "A").await;
    assert_eq!(restored(&tab).await, 1, "A came back from the cache");
    assert!(
        in_use_refusals(&rig.client, id).await.is_empty(),
        "no document was refused the session: {}",
        rig.client.status().await["refused"]
    );
    let sessions = rig.client.session_list().await;
    assert_eq!(sessions.len(), 1, "one tab, one session: {sessions:?}");
}

async fn our_rig(env: &[(&str, &str)], sdk: Option<&std::path::Path>) -> SdkRig {
    let rig = match sdk {
        Some(dir) => SdkRig::launch_serving_sdk_with(dir, env).await,
        None => SdkRig::launch_with(env).await,
    }
    .unwrap_or_else(|why| panic!("{why}"));
    rig.app.history_page("/history/a.html", our_page("A"));
    rig.app.history_page("/history/b.html", our_page("B"));
    rig
}

/// Page A of the rig, connecting as `id`.
fn url_a(rig: &SdkRig, id: &str) -> String {
    rig.app.url(&format!(
        "/history/a.html?port={}&token={}&session={id}",
        rig.port(),
        rig.token()
    ))
}

#[tokio::test]
async fn our_sdk_hands_its_session_to_the_tabs_newest_document_across_the_cache() {
    let rig = our_rig(&[], None).await;
    round_trip_through_history(&rig, &url_a(&rig, "tab"), "tab").await;
}

#[tokio::test]
async fn our_sdk_lets_go_on_pagehide_without_the_bridges_help() {
    let rig = our_rig(&[(env::TEST_STAND_IN_KEEP_FROZEN_HOLDER, "1")], None).await;
    round_trip_through_history(&rig, &url_a(&rig, "tab"), "tab").await;
}

/// Our SDK with its back/forward cache hand-over taken out (`lifecycle.js` a no-op).
fn sdk_without_hand_over() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let sdk = harness::fixture_app::repo_root().join("sdk");
    std::fs::copy(sdk.join("reticle.js"), dir.path().join("reticle.js")).unwrap();
    let src = dir.path().join("src");
    copy_tree(&sdk.join("src"), &src);
    std::fs::write(
        src.join("lifecycle.js"),
        "export function followHistoryCache() { return () => {}; }\n",
    )
    .unwrap();
    dir
}

fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[tokio::test]
async fn negative_control_without_the_hand_over_the_newer_document_is_refused() {
    let sdk = sdk_without_hand_over();
    let rig = our_rig(
        &[(env::TEST_STAND_IN_KEEP_FROZEN_HOLDER, "1")],
        Some(sdk.path()),
    )
    .await;
    let url_a = url_a(&rig, "tab");
    let _tab = rig.browser.open(&url_a).await.unwrap();
    wait_answering(&rig.client, "tab", "A").await;
    rig.client
        .command(
            Some("tab"),
            "navigate",
            json!({"url": page_b(&url_a)}),
            None,
        )
        .await;
    let refused = poll::until("B refused the session", BOUND, async || {
        let refused = in_use_refusals(&rig.client, "tab").await;
        (!refused.is_empty()).then_some(refused)
    })
    .await;
    assert!(
        refused[0]["url"]
            .as_str()
            .unwrap()
            .contains("/history/b.html"),
        "{refused:?}"
    );
    assert_ne!(
        answering_title(&rig.client, "tab").await.as_deref(),
        Some("B"),
        "B did not get the session"
    );
}

async fn published_rig(env: &[(&str, &str)]) -> (SdkRig, PublishedSdk) {
    let sdk = tokio::task::spawn_blocking(PublishedSdk::build)
        .await
        .unwrap()
        .unwrap_or_else(|why| panic!("could not build the published SDK bundle: {why}"));
    let rig = SdkRig::launch_with(env)
        .await
        .unwrap_or_else(|why| panic!("{why}"));
    let bundle = std::fs::read_to_string(sdk.bundle()).unwrap();
    rig.app
        .file("/published/reticle-sdk.mjs", "text/javascript", bundle);
    rig.app.history_page("/history/a.html", published_page("A"));
    rig.app.history_page("/history/b.html", published_page("B"));
    (rig, sdk)
}

#[tokio::test]
async fn the_published_sdk_with_a_fixed_session_follows_the_tab_across_the_cache() {
    let (rig, _sdk) = published_rig(&[]).await;
    round_trip_through_history(&rig, &url_a(&rig, "my-app"), "my-app").await;
}

#[tokio::test]
async fn negative_control_a_bridge_keeping_the_frozen_holder_refuses_the_published_sdk() {
    let (rig, _sdk) = published_rig(&[(env::TEST_STAND_IN_KEEP_FROZEN_HOLDER, "1")]).await;
    let url_a = url_a(&rig, "my-app");
    let _tab = rig.browser.open(&url_a).await.unwrap();
    wait_answering(&rig.client, "my-app", "A").await;
    rig.client
        .command(
            Some("my-app"),
            "navigate",
            json!({"url": page_b(&url_a)}),
            None,
        )
        .await;
    // 2.0.0 retries every second and is refused each time while A sits in the cache.
    poll::until("B refused twice", BOUND, async || {
        (in_use_refusals(&rig.client, "my-app").await.len() >= 2).then_some(())
    })
    .await;
    assert_ne!(
        answering_title(&rig.client, "my-app").await.as_deref(),
        Some("B")
    );
}
