//! The tool gates' rig: an owned daemon (private state dir, a private project dir for
//! capsules), the fixture app, Chromium, and an agent's `McpClient` on `reticle mcp` — the
//! whole stack an agent uses, four hops and the page.

use std::time::Duration;

use harness::{Browser, FixtureApp, McpClient, McpFailure, OwnedDaemon, ProxyOptions, Tab, poll};
use serde_json::{Value, json};

pub const BOUND: Duration = Duration::from_secs(30);

pub struct ToolRig {
    pub daemon: OwnedDaemon,
    pub app: FixtureApp,
    pub browser: Browser,
    pub client: McpClient,
    pub project: tempfile::TempDir,
    /// The session calls are for when they name none (the fixture's sandboxed iframe is a
    /// second session, so calls must say which page they mean).
    pub default_session: std::sync::Mutex<Option<String>>,
}

impl ToolRig {
    /// The stack, with `env` set on the daemon.
    pub async fn start(env: &[(&str, &str)]) -> Self {
        let project = tempfile::tempdir().unwrap();
        let mut builder = OwnedDaemon::builder().env(
            "RETICLE_PROJECT_DIR",
            project.path().to_string_lossy().to_string(),
        );
        for (key, value) in env {
            builder = builder.env(key, *value);
        }
        let daemon = builder.start().await;
        let app = FixtureApp::start().await;
        let browser = Browser::launch().await.expect("chromium launches");
        let client = McpClient::start(ProxyOptions::new(daemon.port(), daemon.state_dir()))
            .await
            .expect("reticle mcp starts");
        Self {
            daemon,
            app,
            browser,
            client,
            project,
            default_session: std::sync::Mutex::new(None),
        }
    }

    /// The fixture app's URL for a session id.
    pub fn fixture_url(&self, session: &str) -> String {
        self.app.url(&format!(
            "/?reticlePort={}&reticleToken={}&session={session}",
            self.daemon.port(),
            self.daemon.token()
        ))
    }

    /// Opens `url` in a tab and waits until `session` is listed by reticle_sessions.
    pub async fn open_at(&self, url: &str, session: &str) -> Tab {
        let tab = self.browser.open(url).await.unwrap();
        self.wait_session(session).await;
        *self.default_session.lock().unwrap() = Some(session.to_string());
        tab
    }

    /// Opens the fixture app as `session`.
    pub async fn open(&self, session: &str) -> Tab {
        let url = self.fixture_url(session);
        self.open_at(&url, session).await
    }

    /// Waits until reticle_sessions lists `session`; its entry.
    pub async fn wait_session(&self, session: &str) -> Value {
        poll::until(
            &format!("session {session} in reticle_sessions"),
            BOUND,
            async || {
                let listed = self.call("reticle_sessions", json!({})).await;
                listed["sessions"]
                    .as_array()?
                    .iter()
                    .find(|s| s["sessionId"] == session)
                    .cloned()
            },
        )
        .await
    }

    /// A tool call's whole result (`content`, `structuredContent`, `isError`).
    pub async fn result(&self, tool: &str, mut args: Value) -> Result<Value, McpFailure> {
        let takes_session = !matches!(
            tool,
            "reticle_sessions" | "reticle_tools" | "reticle_feedback" | "reticle_wait_ready"
        );
        if let (Some(id), Some(map)) = (
            self.default_session.lock().unwrap().clone(),
            args.as_object_mut(),
        ) && takes_session
            && !map.contains_key("sessionId")
        {
            map.insert("sessionId".into(), json!(id));
        }
        self.client.call_tool(tool, args).await
    }

    /// A tool call's structured content; panics when the call itself failed.
    pub async fn call(&self, tool: &str, args: Value) -> Value {
        let result = self
            .result(tool, args.clone())
            .await
            .unwrap_or_else(|e| panic!("{tool} {args}: {e:?}"));
        result["structuredContent"].clone()
    }

    /// A call that must succeed (no refusal).
    pub async fn ok(&self, tool: &str, args: Value) -> Value {
        let result = self
            .result(tool, args.clone())
            .await
            .unwrap_or_else(|e| panic!("{tool} {args}: {e:?}"));
        assert_ne!(result["isError"], true, "{tool} {args} refused: {result}");
        result["structuredContent"].clone()
    }

    /// A call that must be refused with `{ok:false, reason, recovery}`.
    pub async fn refused(&self, tool: &str, args: Value) -> Value {
        let result = self
            .result(tool, args.clone())
            .await
            .unwrap_or_else(|e| panic!("{tool} {args}: {e:?}"));
        assert_eq!(
            result["isError"], true,
            "{tool} {args} was not refused: {result}"
        );
        let refusal = result["structuredContent"].clone();
        assert_structured_refusal(&refusal);
        refusal
    }

    /// The first element ref a query finds.
    pub async fn first_ref(&self, query: Value) -> String {
        let found = self.ok("reticle_query", query.clone()).await;
        found["elements"][0]["ref"]
            .as_str()
            .unwrap_or_else(|| panic!("no element for {query}: {found}"))
            .to_string()
    }

    /// Serves `html` at `path` with the published 2.0.0 SDK bundle at
    /// `/published/reticle-sdk.mjs` (the page imports it and connects to `?port=&token=`), opens
    /// it and waits until `session` is listed.
    pub async fn open_published(&self, path: &str, html: &str, session: &str) -> Tab {
        let sdk = tokio::task::spawn_blocking(harness::published_sdk::PublishedSdk::build)
            .await
            .unwrap()
            .unwrap_or_else(|why| panic!("could not build the published SDK bundle: {why}"));
        let bundle = std::fs::read_to_string(sdk.bundle()).unwrap();
        self.app
            .file("/published/reticle-sdk.mjs", "text/javascript", bundle);
        self.app.page(path, html);
        let url = self.app.url(&format!(
            "{path}?port={}&token={}",
            self.daemon.port(),
            self.daemon.token()
        ));
        self.open_at(&url, session).await
    }

    /// The saved flow file `name` as text.
    pub fn flow_file(&self, name: &str) -> String {
        let path = self
            .project
            .path()
            .join(format!(".reticle/flows/{name}.json"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"))
    }

    /// The daemon log's lines, parsed.
    pub fn daemon_log(&self) -> String {
        std::fs::read_to_string(self.daemon.log_path()).unwrap_or_default()
    }
}

/// What must be identical across replays of an unchanged flow on an unchanged app: the verdict,
/// its reason, the failing step, and each step's verdict and reason.
pub fn verdict_shape(replayed: &Value) -> Value {
    let steps: Vec<Value> = replayed["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| json!([s["step"], s["verified"], s["reason"]]))
        .collect();
    json!({
        "verified": replayed["verified"],
        "reason": replayed["reason"],
        "failingStep": replayed["failingStep"],
        "steps": steps,
    })
}

/// `{ok:false, reason, recovery}` with sentences, and nothing that looks like a crash.
pub fn assert_structured_refusal(refusal: &Value) {
    assert_eq!(refusal["ok"], false, "{refusal}");
    assert!(
        refusal["reason"].as_str().is_some_and(|r| !r.is_empty()),
        "{refusal}"
    );
    assert!(
        refusal["recovery"].as_str().is_some_and(|r| !r.is_empty()),
        "{refusal}"
    );
    assert_no_crash_text(&refusal.to_string());
}

/// No stack trace, panic text or internal path.
pub fn assert_no_crash_text(text: &str) {
    for needle in [
        "panicked",
        "stack backtrace",
        "RUST_BACKTRACE",
        "thread '",
        ".rs:",
        "/src/",
        "/home/",
        "/root/",
        "/work/",
        "at line",
    ] {
        assert!(!text.contains(needle), "crash text '{needle}' in {text}");
    }
}

/// Polls reticle_network until a request whose url contains `needle` has completed.
pub async fn poll_network(rig: &ToolRig, needle: &str) -> Value {
    poll::until(
        &format!("a completed request to {needle}"),
        BOUND,
        async || {
            let read = rig
                .ok("reticle_network", json!({"urlContains": needle}))
                .await;
            read["requests"]
                .as_array()?
                .iter()
                .any(|r| r["status"].is_u64())
                .then_some(read)
        },
    )
    .await
}
