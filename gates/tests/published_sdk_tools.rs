//! Tools through the whole stack against a page running the published `@reticlehq/browser`
//! 2.0.0: an agent's `reticle_act` and `reticle_act_and_wait` given a `target` (not a ref) must
//! resolve it from what protocol 1's `query` answer guarantees (`{elements, hint?}`, no
//! `count`), act on the one element it names, and refuse, naming the candidates, when the target
//! names several.

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
