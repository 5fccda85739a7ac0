//! Tools through the whole stack against a page running the published `@reticlehq/browser`
//! 2.0.0: an agent's `reticle_act` and `reticle_act_and_wait` given a `target` (not a ref) must
//! resolve it from what protocol 1's `query` answer guarantees (`{elements, hint?}`, no
//! `count`), act on the one element it names, and refuse, naming the candidates, when the target
//! names several. A name matches whole unless `exact: false`, with this SDK and ours.

mod support;

use serde_json::json;
use support::tools::ToolRig;

const PAGE: &str = r#"<!doctype html>
<html><head><title>Published SDK tools</title></head>
<body>
  <h1>Published SDK 2.0.0</h1>
  <button onclick="window.clicks=(window.clicks||0)+1; document.getElementById('out').textContent='Added'">Add to cart</button>
  <button>Remove</button><button>Remove</button>
  <p id="out"></p>
  <script type="module">
    import { reticle } from '/published/reticle-sdk.mjs';
    const q = new URLSearchParams(location.search);
    reticle.connect({
      url: `ws://127.0.0.1:${q.get('port')}/reticle`,
      token: q.get('token'), session: 'published-tools', present: false,
    });
  </script>
</body></html>"#;

#[tokio::test]
async fn acts_by_target_work_with_the_published_sdk() {
    let rig = ToolRig::start(&[]).await;
    let tab = rig
        .open_published("/published-tools.html", PAGE, "published-tools")
        .await;

    let target = json!({"role": "button", "name": "Add to cart"});
    rig.ok("reticle_act", json!({"target": target, "action": "click"}))
        .await;
    let clicks: u32 = tab.eval("window.clicks || 0").await.unwrap();
    assert_eq!(clicks, 1, "the act by target clicked the button");

    let waited = rig
        .ok(
            "reticle_act_and_wait",
            json!({
                "target": target,
                "action": "click",
                "until": {"kind": "text", "contains": "Added"},
            }),
        )
        .await;
    assert_eq!(waited["verified"], "yes", "{waited}");
    let clicks: u32 = tab.eval("window.clicks || 0").await.unwrap();
    assert_eq!(clicks, 2);

    // The control: a target that names two elements is refused with both candidates, and
    // nothing is clicked.
    let refusal = rig
        .refused(
            "reticle_act",
            json!({"target": {"role": "button", "name": "Remove"}, "action": "click"}),
        )
        .await;
    assert!(
        refusal["reason"].as_str().unwrap().contains("2 elements"),
        "{refusal}"
    );
    assert_eq!(refusal["candidates"].as_array().map(Vec::len), Some(2));
    let missing = rig
        .refused(
            "reticle_act",
            json!({"target": {"testid": "no-such-thing"}, "action": "click"}),
        )
        .await;
    assert!(
        missing["reason"].as_str().unwrap().contains("no element"),
        "{missing}"
    );
}

/// Two buttons, "Add" and "Add todo", each recording its own click.
fn add_buttons(sdk_script: &str) -> String {
    format!(
        r#"<!doctype html><html><head><title>Exact names</title></head><body>
  <button onclick="window.hits=(window.hits||[]).concat('Add')">Add</button>
  <button onclick="window.hits=(window.hits||[]).concat('Add todo')">Add todo</button>
  <script type="module">{sdk_script}</script>
</body></html>"#
    )
}

/// A role-and-name target names the element whose whole name it is: `{role: button, name:
/// "Add"}` clicks "Add" and never "Add todo", and a query for it lists "Add" alone. Control:
/// `exact: false` asks for the substring and lists `partly` (our SDK: both buttons; 2.0.0
/// ignores `exact` and matches a role's name whole itself, so never a wrong element).
async fn names_match_whole(rig: &ToolRig, tab: &harness::Tab, partly: &[&str]) {
    let add = json!({"role": "button", "name": "Add"});
    rig.ok("reticle_act", json!({"target": add, "action": "click"}))
        .await;
    let hits: Vec<String> = tab.eval("window.hits || []").await.unwrap();
    assert_eq!(hits, ["Add"], "the act clicked the button named Add only");

    let names = |found: &serde_json::Value| -> Vec<String> {
        found["elements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap().to_string())
            .collect()
    };
    let whole = rig.ok("reticle_query", add.clone()).await;
    assert_eq!(names(&whole), ["Add"], "{whole}");
    let part = rig
        .ok(
            "reticle_query",
            json!({"role": "button", "name": "Add", "exact": false}),
        )
        .await;
    assert_eq!(names(&part), partly, "{part}");

    // An element predicate holds to the whole name too; `exact: false` asks for a part.
    let verified = async |predicate: serde_json::Value| {
        let answer = rig
            .ok("reticle_assert", json!({ "predicate": predicate }))
            .await;
        answer["verified"].as_str().unwrap().to_string()
    };
    let whole_part = json!({"kind": "element", "role": "button", "name": "Add t"});
    assert_eq!(
        verified(whole_part).await,
        "no",
        "no button is named \"Add t\""
    );
    let part_of = json!({"kind": "element", "role": "button", "name": "Add t", "exact": false});
    // Ours finds "Add todo"; 2.0.0 matches names whole only, so a part it cannot look for is
    // unknown, never no.
    let expected = if partly.len() > 1 { "yes" } else { "unknown" };
    assert_eq!(verified(part_of).await, expected);
    let named = json!({"kind": "element", "role": "button", "name": "Add", "exact": false});
    assert_eq!(verified(named).await, "yes");
}

#[tokio::test]
async fn a_name_matches_whole_with_the_published_sdk() {
    let rig = ToolRig::start(&[]).await;
    let script = "import { reticle } from '/published/reticle-sdk.mjs';
    const q = new URLSearchParams(location.search);
    reticle.connect({ url: `ws://127.0.0.1:${q.get('port')}/reticle`, token: q.get('token'),
      session: 'published-exact', present: false });";
    let tab = rig
        .open_published(
            "/published-exact.html",
            &add_buttons(script),
            "published-exact",
        )
        .await;
    names_match_whole(&rig, &tab, &["Add"]).await;
}

#[tokio::test]
async fn a_name_matches_whole_with_our_sdk() {
    let rig = ToolRig::start(&[]).await;
    let script = "import { connect } from '/sdk/reticle.js';
    const q = new URLSearchParams(location.search);
    connect({ port: Number(q.get('port')), token: q.get('token'), session: 'ours-exact',
      present: false });";
    rig.app.page("/ours-exact.html", add_buttons(script));
    let url = rig.app.url(&format!(
        "/ours-exact.html?port={}&token={}",
        rig.daemon.port(),
        rig.daemon.token()
    ));
    let tab = rig.open_at(&url, "ours-exact").await;
    names_match_whole(&rig, &tab, &["Add", "Add todo"]).await;
    // A target asking for the substring names both buttons: refused, nothing clicked.
    let part = json!({"role": "button", "name": "Add", "exact": false});
    let refusal = rig
        .refused("reticle_act", json!({"target": part, "action": "click"}))
        .await;
    assert!(
        refusal["reason"].as_str().unwrap().contains("2 elements"),
        "{refusal}"
    );
    let hits: Vec<String> = tab.eval("window.hits || []").await.unwrap();
    assert_eq!(hits, ["Add"], "the refused act clicked nothing more");
}
