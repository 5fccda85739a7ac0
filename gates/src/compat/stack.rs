//! The compatibility suite's stack for one SDK: an owned daemon (private state and project
//! dirs), the fixture app serving its own page with the SDK import swapped for the one under
//! test, Chromium on that page, and an agent's `McpClient` on the real proxy (`reticle mcp`).
//!
//! This module starts and reaches the stack; it must not judge what a tool answered.

use std::path::Path;
use std::time::Duration;

use harness::browser::Tab;
use harness::{Browser, FixtureApp, McpClient, OwnedDaemon, ProxyOptions};
use reticle::config::env;
use serde_json::{Value, json};

use super::Sdk;
use crate::scenarios::page::session_listed;

/// The session id the page connects as.
pub const SESSION: &str = "compat";
/// How long a page or an event gets to show up.
pub const BOUND: Duration = Duration::from_secs(30);

/// The fixture page's SDK import, which the suite swaps.
const OUR_IMPORT: &str = "import * as reticle from '/sdk/reticle.js';";

/// Maps the fixture's calls (`connect({port, token, session, present})`, `registerStore(name,
/// get)`, `signal(name, data)`) onto the published API (`connect({url, ...})`, its own
/// `registerStore(name, getter)`, which its state_read reads, and `state(name, value)`, the
/// state-change event, re-sent on every signal the fixture sends after each change).
const PUBLISHED_ADAPTER: &str = r#"import { reticle, registerStore as publishedRegisterStore } from '/published/reticle-sdk.mjs';
const stores = new Map();
export function connect(o) {
  reticle.connect({ url: `ws://127.0.0.1:${o.port}/reticle`, token: o.token, session: o.session, present: false });
  return { ok: true, sessionId: o.session };
}
export function registerStore(name, get) {
  stores.set(name, get);
  publishedRegisterStore(name, get);
  reticle.state(name, get());
  return { ok: true };
}
export function signal(name, data) {
  for (const [store, get] of stores) reticle.state(store, get());
  reticle.signal(name, data);
  return { ok: true };
}
"#;

/// Ours with `registerStore` made a no-op (a local export shadows the star export).
const BROKEN_STATE: &str = r#"export * from '/sdk/reticle.js';
export function registerStore() { return { ok: true }; }
"#;

/// The stack for one SDK, with the page open and its session listed.
pub struct Stack {
    pub sdk: Sdk,
    pub daemon: OwnedDaemon,
    pub app: FixtureApp,
    pub browser: Browser,
    pub client: McpClient,
    pub project: tempfile::TempDir,
    pub tab: Tab,
    /// The page's URL (navigate probes move from it).
    pub url: String,
    /// Kept alive while the page may load it.
    _published: Option<harness::published_sdk::PublishedSdk>,
}

impl Stack {
    /// Starts everything for `sdk` with `reticle` as the proxy's binary; `Err` says which part
    /// did not start.
    pub async fn start(sdk: Sdk, reticle: &Path) -> Result<Self, String> {
        let project = tempfile::tempdir().map_err(|e| e.to_string())?;
        let daemon = OwnedDaemon::builder()
            .env(
                env::PROJECT_DIR,
                project.path().to_string_lossy().to_string(),
            )
            .try_start()
            .await?;
        let app = FixtureApp::start().await;
        let index =
            std::fs::read_to_string(harness::fixture_app::repo_root().join("apps/e2e/index.html"))
                .map_err(|e| format!("the fixture page could not be read: {e}"))?;
        if !index.contains(OUR_IMPORT) {
            return Err("the fixture page no longer imports /sdk/reticle.js as expected".into());
        }
        let published = match sdk {
            Sdk::Ours => None,
            Sdk::Published => {
                let built =
                    tokio::task::spawn_blocking(harness::published_sdk::PublishedSdk::build)
                        .await
                        .map_err(|e| e.to_string())??;
                let bundle = std::fs::read_to_string(built.bundle()).map_err(|e| e.to_string())?;
                app.file("/published/reticle-sdk.mjs", "text/javascript", bundle);
                app.file("/compat/sdk.js", "text/javascript", PUBLISHED_ADAPTER);
                Some(built)
            }
            Sdk::BrokenState => {
                app.file("/compat/sdk.js", "text/javascript", BROKEN_STATE);
                None
            }
        };
        let page = match sdk {
            Sdk::Ours => "/".to_string(),
            _ => {
                app.page(
                    "/compat.html",
                    index.replace(OUR_IMPORT, "import * as reticle from '/compat/sdk.js';"),
                );
                "/compat.html".to_string()
            }
        };
        let url = app.url(&format!(
            "{page}?reticlePort={}&reticleToken={}&session={SESSION}",
            daemon.port(),
            daemon.token()
        ));
        let browser = Browser::launch()
            .await
            .map_err(|e| format!("chromium did not launch: {e}"))?;
        let client =
            McpClient::start(ProxyOptions::new(daemon.port(), daemon.state_dir()).program(reticle))
                .await
                .map_err(|e| format!("reticle mcp did not start: {e:?}"))?;
        let tab = browser
            .open(&url)
            .await
            .map_err(|e| format!("the page did not open: {e}"))?;
        let stack = Self {
            sdk,
            daemon,
            app,
            browser,
            client,
            project,
            tab,
            url,
            _published: published,
        };
        stack.session_listed().await.then_some(()).ok_or_else(|| {
            format!(
                "the page never showed up in reticle_sessions under {}",
                sdk.label()
            )
        })?;
        Ok(stack)
    }

    /// Waits until reticle_sessions lists the page's session.
    pub async fn session_listed(&self) -> bool {
        session_listed(BOUND, SESSION, async || {
            self.call("reticle_sessions", json!({})).await.ok()
        })
        .await
    }

    /// A tool call's whole result; the page's session is named unless the tool takes none.
    pub async fn call(&self, tool: &str, mut args: Value) -> Result<Value, String> {
        if !matches!(
            tool,
            "reticle_sessions" | "reticle_tools" | "reticle_feedback"
        ) && let Some(map) = args.as_object_mut()
        {
            map.entry("sessionId").or_insert(json!(SESSION));
        }
        self.client
            .call_tool(tool, args)
            .await
            .map_err(|e| format!("{e:?}"))
    }

    /// Evaluates `expression` in the page; its JSON value, or null.
    pub async fn page(&self, expression: &str) -> Value {
        self.tab.eval(expression).await.unwrap_or(Value::Null)
    }
}
