//! Store paths through the whole stack, with our SDK and the published `@reticlehq/browser`
//! 2.0.0: a path with a bracket index (`items[3].title`, the form our schema gives as its
//! example) must read the same on both, so a true state predicate is `yes` on a working app; a
//! path the page's SDK cannot read (a key holding `.`, which 2.0.0's dotted walk cannot name) is
//! `unknown` there, never `no`; a path that is really absent is still `no`. The negative
//! control: the bracketed path sent to 2.0.0 as written reads "not found", the false regression
//! the translation prevents. And `reticle_state {}` on a page with no store says how to
//! register one.

mod support;

use harness::BridgeClient;
use serde_json::{Value, json};
use support::tools::ToolRig;

/// The store every page here registers (unless its URL says `nostore`).
const STORE: &str = "{ items: [{ title: 'Wash up' }, { title: 'Walk' }, { title: 'Read' }, { title: 'Buy milk' }], prefs: { 'dark.mode': true } }";

fn page(module: &str, import: &str, connect: &str) -> String {
    format!(
        r#"<!doctype html><html><head><title>State paths</title></head><body><h1>Todos</h1>
<script type="module">
  import {{ {import} }} from '{module}';
  const q = new URLSearchParams(location.search);
  if (!q.has('nostore')) registerStore('todos', () => ({STORE}));
  {connect}
</script></body></html>"#,
    )
}

fn published_page(session: &str) -> String {
    page(
        "/published/reticle-sdk.mjs",
        "reticle, registerStore",
        &format!(
            "reticle.connect({{ url: `ws://127.0.0.1:${{q.get('port')}}/reticle`, token: q.get('token'), session: '{session}', present: false }});"
        ),
    )
}

fn our_page(session: &str) -> String {
    page(
        "/sdk/reticle.js",
        "connect, registerStore",
        &format!(
            "connect({{ port: Number(q.get('port')), token: q.get('token'), session: '{session}', present: false }});"
        ),
    )
}

async fn state_verdict(rig: &ToolRig, path: &str, equals: Value) -> Value {
    rig.ok(
        "reticle_assert",
        json!({"predicate": {"kind": "state", "store": "todos", "path": path, "equals": equals}}),
    )
    .await
}

fn verdict(answer: &Value) -> (&str, &str) {
    (
        answer["verified"].as_str().unwrap_or("?"),
        answer["reason"].as_str().unwrap_or("?"),
    )
}

/// What both SDKs must agree on.
async fn bracket_paths_read_the_same(rig: &ToolRig) {
    let yes = state_verdict(rig, "items[3].title", json!("Buy milk")).await;
    assert_eq!(verdict(&yes).0, "yes", "{yes}");
    let read = rig
        .ok(
            "reticle_state",
            json!({"store": "todos", "path": "items[3].title"}),
        )
        .await;
    assert_eq!(
        (read["found"].as_bool(), read["value"].as_str()),
        (Some(true), Some("Buy milk")),
        "{read}"
    );
    // Still a regression where there is one: a wrong value, and an index past the end.
    let wrong = state_verdict(rig, "items[3].title", json!("Buy bread")).await;
    assert_eq!(verdict(&wrong).0, "no", "{wrong}");
    let absent = state_verdict(rig, "items[9].title", json!("Buy milk")).await;
    assert_eq!(verdict(&absent).0, "no", "{absent}");
}

#[tokio::test]
async fn the_published_sdk_reads_bracket_paths_and_a_path_it_cannot_read_is_unknown() {
    let rig = ToolRig::start(&[]).await;
    let _tab = rig
        .open_published(
            "/state-paths.html",
            &published_page("pub-state"),
            "pub-state",
        )
        .await;
    bracket_paths_read_the_same(&rig).await;

    let unreadable = state_verdict(&rig, "prefs[\"dark.mode\"]", json!(true)).await;
    assert_eq!(verdict(&unreadable).0, "unknown", "{unreadable}");
    assert!(
        unreadable.to_string().contains("dotted paths only"),
        "{unreadable}"
    );
    let read = rig
        .ok(
            "reticle_state",
            json!({"store": "todos", "path": "prefs[\"dark.mode\"]"}),
        )
        .await;
    assert!(read["found"].is_null(), "not `false`: {read}");

    // The negative control: the bracketed path as written, straight to the page, is "not
    // found" under 2.0.0, which would have been judged `no`.
    let raw = BridgeClient::new(rig.daemon.port())
        .command(
            Some("pub-state"),
            "state_read",
            json!({"store": "todos", "path": "items[3].title"}),
            None,
        )
        .await;
    assert_eq!(raw["result"]["found"], false, "{raw}");
}

#[tokio::test]
async fn our_sdk_reads_bracket_paths_and_quoted_keys() {
    let rig = ToolRig::start(&[]).await;
    rig.app.page("/state-paths.html", our_page("our-state"));
    let url = rig.app.url(&format!(
        "/state-paths.html?port={}&token={}",
        rig.daemon.port(),
        rig.daemon.token()
    ));
    let _tab = rig.open_at(&url, "our-state").await;
    bracket_paths_read_the_same(&rig).await;
    let quoted = state_verdict(&rig, "prefs[\"dark.mode\"]", json!(true)).await;
    assert_eq!(verdict(&quoted).0, "yes", "{quoted}");
    // Our SDK names the key it did not find: its "not found" is an answer.
    let missing = state_verdict(&rig, "prefs[\"light.mode\"]", json!(true)).await;
    assert_eq!(verdict(&missing).0, "no", "{missing}");
}

#[tokio::test]
async fn reticle_state_on_a_page_without_stores_says_how_to_register_one() {
    let rig = ToolRig::start(&[]).await;
    rig.app.page("/no-store.html", our_page("no-store"));
    let url = rig.app.url(&format!(
        "/no-store.html?port={}&token={}&nostore=1",
        rig.daemon.port(),
        rig.daemon.token()
    ));
    let _tab = rig.open_at(&url, "no-store").await;
    let read = rig.ok("reticle_state", json!({})).await;
    let note = read["note"].as_str().unwrap_or_else(|| panic!("{read}"));
    assert!(
        note.contains("registerStore(") && note.contains("Pinia"),
        "{note}"
    );
    // The control: a page with a store gets no such note.
    rig.app.page("/with-store.html", our_page("with-store"));
    let url = rig.app.url(&format!(
        "/with-store.html?port={}&token={}",
        rig.daemon.port(),
        rig.daemon.token()
    ));
    let _tab = rig.open_at(&url, "with-store").await;
    let read = rig.ok("reticle_state", json!({})).await;
    assert!(read.get("note").is_none(), "{read}");
    assert_eq!(read["storeNames"], json!(["todos"]), "{read}");
}
