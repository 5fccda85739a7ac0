//! The published `@reticlehq/browser` 2.0.0 with its presenter on (its default): its own
//! controls (the "Flag a bug" button, the panel's Pause, End, Send, ...) must not reach an
//! agent as if they were the app's, in `reticle_snapshot`, `reticle_query`, an act by target or
//! an element verdict, while the app's own button that shares a name with one of them (Pause)
//! stays. The negative control: the same query straight to the page lists the SDK's controls.

mod support;

use harness::BridgeClient;
use serde_json::{Value, json};
use support::tools::ToolRig;

const PAGE: &str = r#"<!doctype html>
<html><head><title>Own UI</title></head>
<body>
  <h1>Player</h1>
  <button onclick="window.adds=(window.adds||0)+1">Add</button>
  <button onclick="window.pauses=(window.pauses||0)+1">Pause</button>
  <script type="module">
    import { reticle } from '/published/reticle-sdk.mjs';
    const q = new URLSearchParams(location.search);
    reticle.connect({ url: `ws://127.0.0.1:${q.get('port')}/reticle`, token: q.get('token'), session: 'own-ui' });
  </script>
</body></html>"#;

fn names(elements: &Value) -> Vec<String> {
    elements
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(|e| e["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn the_published_sdks_own_controls_stay_out_of_what_an_agent_sees() {
    let rig = ToolRig::start(&[]).await;
    let tab = rig.open_published("/own-ui.html", PAGE, "own-ui").await;
    // The control first: the page itself lists its SDK's controls among the app's, once the
    // presenter has mounted them.
    let bridge = BridgeClient::new(rig.daemon.port());
    let raw = harness::poll::until(
        "the SDK's controls mounted",
        support::tools::BOUND,
        async || {
            let raw = bridge
                .command(Some("own-ui"), "query", json!({"role": "button"}), None)
                .await;
            let listed = names(&raw["result"]["elements"]);
            (listed.iter().any(|n| n == "Flag a bug for the agent")
                && listed.iter().any(|n| n == "Minimise the panel"))
            .then_some(listed)
        },
    )
    .await;
    assert!(raw.iter().filter(|n| *n == "Pause").count() == 2, "{raw:?}");

    let snapshot = rig
        .ok("reticle_snapshot", json!({"mode": "interactive"}))
        .await;
    let tree = snapshot["tree"].as_str().unwrap_or_default();
    assert!(
        tree.contains("\"Add\"") && !tree.contains("Flag a bug"),
        "{tree}"
    );
    let full = rig.ok("reticle_snapshot", json!({})).await;
    assert!(
        !full["tree"]
            .as_str()
            .unwrap_or_default()
            .contains("Flag a bug"),
        "{full}"
    );

    let buttons = rig.ok("reticle_query", json!({"role": "button"})).await;
    assert_eq!(
        names(&buttons["elements"]),
        ["Add", "Pause"],
        "the app's buttons only: {buttons}"
    );
    let text = rig.ok("reticle_query", json!({"text": "Flag a bug"})).await;
    assert_eq!(names(&text["elements"]).len(), 0, "{text}");

    // An act by target names one element: the app's Pause, not the panel's.
    rig.ok(
        "reticle_act",
        json!({"target": {"role": "button", "name": "Pause"}, "action": "click"}),
    )
    .await;
    let pauses: u32 = tab.eval("window.pauses || 0").await.unwrap();
    assert_eq!(pauses, 1);

    let verdict = rig
        .ok(
            "reticle_assert",
            json!({"predicate": {"kind": "element", "role": "button", "name": "Flag a bug for the agent"}}),
        )
        .await;
    assert_eq!(verdict["verified"], "no", "{verdict}");
}
