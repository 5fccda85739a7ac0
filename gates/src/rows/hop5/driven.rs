//! What the driven-browser rows (H5.7, H5.8) share: a daemon with a private `TMPDIR` (its
//! Chromium found by profile path), the fixture app serving the row's pages, and an agent's
//! `reticle mcp` whose tool calls are recorded under names the judges read. It records; it
//! must not judge.

use std::time::Duration;

use harness::mcp_client::completion_of_result;
use harness::{FixtureApp, McpClient, OwnedDaemon};
use serde_json::{Value, json};

use crate::history::{History, OpType};
use crate::scenarios::{GateEnv, proxy_options};

/// How long one recorded call may take before the history says `info` (no answer).
pub const CALL_BOUND: Duration = Duration::from_secs(30);

/// A daemon that drives a browser, the app it opens, and an agent.
pub struct DrivenRig {
    pub daemon: OwnedDaemon,
    pub app: FixtureApp,
    pub client: std::sync::Arc<McpClient>,
    pub tmp: tempfile::TempDir,
    _project: tempfile::TempDir,
}

impl DrivenRig {
    /// The stack, with `env` set on the daemon; `Err` says what did not start.
    pub async fn start(env: &GateEnv, daemon_env: &[(&str, &str)]) -> Result<Self, String> {
        let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
        let project = tempfile::tempdir().map_err(|e| e.to_string())?;
        let mut builder = OwnedDaemon::builder()
            .env("TMPDIR", tmp.path().to_string_lossy().to_string())
            .env(
                "RETICLE_PROJECT_DIR",
                project.path().to_string_lossy().to_string(),
            );
        for (key, value) in daemon_env {
            builder = builder.env(key, *value);
        }
        let daemon = builder.try_start().await?;
        let app = FixtureApp::start().await;
        let client = McpClient::start(proxy_options(env, daemon.port(), daemon.state_dir()))
            .await
            .map_err(|e| format!("reticle mcp did not start: {}", e.message()))?;
        let client = std::sync::Arc::new(client);
        Ok(Self {
            daemon,
            app,
            client,
            tmp,
            _project: project,
        })
    }

    /// Calls `tool`, recorded as the client call `f`: `ok` with its result, `fail` with a
    /// refusal, `info` when no answer came.
    pub async fn call(
        &self,
        history: &History,
        f: &str,
        tool: &str,
        args: Value,
    ) -> (OpType, Value) {
        history.invoke(f, json!({ "tool": tool, "arguments": args }));
        let answer = tokio::time::timeout(CALL_BOUND, self.client.call_tool(tool, args)).await;
        let (op, value) = match answer {
            Ok(Ok(result)) => completion_of_result(json!(f), &result),
            Ok(Err(failure)) => (OpType::Info, json!({ "message": failure.message() })),
            Err(_) => (
                OpType::Info,
                json!({ "message": "no answer within the bound" }),
            ),
        };
        history.complete(op, f, value.clone());
        (op, value)
    }

    /// Opens `path` of the fixture app (on `host`) in a driven tab, recorded as `f`; its session.
    pub async fn launch(
        &self,
        history: &History,
        f: &str,
        path: &str,
        host: &str,
    ) -> Option<String> {
        let url = self.app.url(path).replace("127.0.0.1", host);
        let (op, value) = self
            .call(
                history,
                f,
                "reticle_session",
                json!({"action": "launch", "url": url}),
            )
            .await;
        (op == OpType::Ok)
            .then(|| {
                value["result"]["structuredContent"]["sessionId"]
                    .as_str()
                    .map(str::to_string)
            })
            .flatten()
    }
}

/// A page with a button and some text, and no SDK in it.
pub const UNWIRED: &str = r#"<!doctype html><title>Unwired</title>
<h1>Nobody wired this page</h1><button data-testid="add">Add</button>"#;
