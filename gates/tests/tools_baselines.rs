//! `reticle_baseline` through the whole stack (agent → `reticle mcp` → daemon → Chromium with
//! the fixture app): a baseline saved by one daemon is read by the next one on the same project
//! (it lives in `.reticle/baselines/`, not in memory), an unchanged page diffs clean, and a page
//! whose disclosure was opened diffs with the changed lines added (the button now expanded, its
//! panel shown) and removed (the button collapsed).

use harness::{Browser, FixtureApp, McpClient, OwnedDaemon, ProxyOptions, Tab, poll};
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

const BOUND: Duration = Duration::from_secs(30);
const SESSION: &str = "baseline-page";

/// A daemon on `project`, an agent on it, and the fixture page open as [`SESSION`].
struct Stack {
    _daemon: OwnedDaemon,
    client: McpClient,
    tab: Tab,
}

impl Stack {
    async fn start(project: &Path, app: &FixtureApp, browser: &Browser) -> Self {
        let daemon = OwnedDaemon::builder()
            .env("RETICLE_PROJECT_DIR", project.to_string_lossy().to_string())
            .env("RETICLE_ADVERTISE_ALL_TOOLS", "1")
            .start()
            .await;
        let client = McpClient::start(ProxyOptions::new(daemon.port(), daemon.state_dir()))
            .await
            .expect("reticle mcp starts");
        let url = app.url(&format!(
            "/?reticlePort={}&reticleToken={}&session={SESSION}",
            daemon.port(),
            daemon.token()
        ));
        let tab = browser.open(&url).await.expect("the fixture opens");
        let stack = Self {
            _daemon: daemon,
            client,
            tab,
        };
        poll::until("the page in reticle_sessions", BOUND, async || {
            let listed = stack.call("reticle_sessions", json!({})).await.ok()?;
            listed["sessions"]
                .as_array()?
                .iter()
                .any(|s| s["sessionId"] == SESSION)
                .then_some(())
        })
        .await;
        stack
    }

    /// A call's structured content, or the refusal as `Err`.
    async fn call(&self, tool: &str, args: Value) -> Result<Value, Value> {
        let result = self
            .client
            .call_tool(tool, args.clone())
            .await
            .unwrap_or_else(|e| panic!("{tool} {args}: {e:?}"));
        let content = result["structuredContent"].clone();
        if result["isError"] == true {
            Err(content)
        } else {
            Ok(content)
        }
    }

    async fn baseline(&self, args: Value) -> Value {
        let mut args = args;
        args["sessionId"] = json!(SESSION);
        self.call("reticle_baseline", args.clone())
            .await
            .unwrap_or_else(|refusal| panic!("reticle_baseline {args}: {refusal}"))
    }
}

#[tokio::test]
async fn a_baseline_outlives_its_daemon_and_diffs_what_changed() {
    let project = tempfile::tempdir().unwrap();
    let app = FixtureApp::start().await;
    let browser = Browser::launch().await.expect("chromium launches");

    let first = Stack::start(project.path(), &app, &browser).await;
    // Reached by its member name through reticle_run, as every extended behaviour is.
    let saved = first
        .call(
            "reticle_run",
            json!({"tool": "reticle_baseline_save", "sessionId": SESSION, "args": {"name": "home"}}),
        )
        .await
        .expect("the baseline is saved");
    assert_eq!(saved["route"], "/", "{saved}");
    assert!(saved["lineCount"].as_u64().unwrap() > 20, "{saved}");
    let again = first
        .call(
            "reticle_baseline",
            json!({"action": "save", "name": "home", "sessionId": SESSION}),
        )
        .await
        .expect_err("a second save without overwrite is refused");
    assert!(
        again["reason"].as_str().unwrap().contains("already saved"),
        "{again}"
    );
    let file = std::fs::read_to_string(project.path().join(".reticle/baselines/home.json"))
        .expect("the baseline is a file in the workspace");
    assert!(file.contains("\"format\": 1"), "{file}");
    assert!(
        !file.contains("reticleToken") && !holds_a_ref(&file),
        "no token or ref is kept: {file}"
    );
    drop(first);

    let second = Stack::start(project.path(), &app, &browser).await;
    let listed = second.baseline(json!({"action": "list"})).await;
    assert_eq!(listed["count"], 1, "{listed}");
    assert_eq!(listed["baselines"][0]["name"], "home");
    let clean = second
        .baseline(json!({"action": "diff", "name": "home"}))
        .await;
    assert_eq!(
        clean["changed"], false,
        "an unchanged page diffs clean: {clean}"
    );

    second
        .tab
        .eval::<bool>(
            "(document.querySelector('[data-testid=\"disclosure-toggle\"]').click(), true)",
        )
        .await
        .unwrap();
    let changed = poll::until("the opened disclosure in the diff", BOUND, async || {
        let diff = second
            .baseline(json!({"action": "diff", "name": "home"}))
            .await;
        (diff["changed"] == true).then_some(diff)
    })
    .await;
    let added = changed["added"].to_string();
    let removed = changed["removed"].to_string();
    assert!(
        added.contains("More details") && added.contains("expanded"),
        "{changed}"
    );
    assert!(removed.contains("More details"), "{changed}");
    assert!(added.contains("disclosure-panel"), "{changed}");
    let missing = second
        .call(
            "reticle_baseline",
            json!({"action": "diff", "name": "nope", "sessionId": SESSION}),
        )
        .await
        .expect_err("an unknown baseline is refused");
    assert!(
        missing["reason"]
            .as_str()
            .unwrap()
            .contains("no baseline named 'nope'"),
        "{missing}"
    );
}

/// Whether an outline holds a ref: the published SDK's ` (ref=eN)` or ours, `eN` after a name.
fn holds_a_ref(text: &str) -> bool {
    text.contains("(ref=e")
        || text.match_indices("\\\" e").any(|(i, m)| {
            text[i + m.len()..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit())
        })
}
