//! An agent built on the official MCP TypeScript client (`sdk/test-support/mcp-sdk-session.mjs`)
//! holding one session with a real `reticle mcp` it started, as the journeys drive it: calls by
//! name (through `reticle_run` for what tools/list does not offer), answers as CallToolResults.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use harness::fixture_app::repo_root;
use harness::marker;
use reticle::config::env;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

/// How long one tool call may take through the TypeScript client (a replay runs several steps).
pub const CALL_BOUND: Duration = Duration::from_secs(150);

/// An agent: the official MCP TypeScript client holding one session with `reticle mcp`, which
/// it started in the project's directory.
pub struct Agent {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    next: u64,
    /// What the client saw at the handshake: the server's instructions and tools.
    pub ready: Value,
}

impl Agent {
    /// `reticle mcp --port <port>` and `extra` arguments (`--drive URL`), started in `project`.
    pub async fn start(project: &Path, state: &Path, port: u16, extra: &[&str]) -> Self {
        let sdk = repo_root().join("sdk");
        assert!(
            sdk.join("node_modules/@modelcontextprotocol/sdk/package.json")
                .is_file(),
            "the official MCP SDK is not installed: run `cd sdk && npm ci`"
        );
        let reticle = harness::binaries::reticle();
        let mut node = tokio::process::Command::new("node");
        node.arg(sdk.join("test-support/mcp-sdk-session.mjs"))
            .arg(&reticle)
            .args(["mcp", "--port", &port.to_string()])
            .args(extra)
            .current_dir(project)
            .env(env::STATE_DIR, state)
            // The daemon this proxy starts stays up through the journey (the reaper ends it).
            .env(env::IDLE_SHUTDOWN_MS, "0")
            .env(marker::MARKER_VAR, marker::marker())
            .env_remove(env::PROJECT_DIR)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = node.spawn().expect("node runs");
        harness::child_stderr::forward(child.stderr.take());
        let stdin = child.stdin.take().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let ready = tokio::time::timeout(CALL_BOUND, lines.next_line())
            .await
            .expect("the TypeScript client's handshake within the bound")
            .expect("its stdout is read")
            .expect("it printed its handshake");
        let ready: Value = serde_json::from_str(&ready).expect("the handshake line is JSON");
        assert_eq!(
            ready["ready"], true,
            "the client's handshake failed: {ready}"
        );
        Self {
            child,
            stdin,
            lines,
            next: 0,
            ready,
        }
    }

    /// Calls `name` (directly when tools/list offers it, else through `reticle_run`, as an
    /// agent reaches the other families); the CallToolResult, or why there was none.
    pub async fn call(&mut self, name: &str, arguments: Value) -> Result<Value, String> {
        let listed = self.ready["tools"]
            .as_array()
            .is_some_and(|tools| tools.iter().any(|t| t == name));
        let (name, arguments) = if listed {
            (name.to_string(), arguments)
        } else {
            (
                "reticle_run".to_string(),
                json!({"tool": name, "args": arguments}),
            )
        };
        self.next += 1;
        let id = self.next;
        let line = json!({"id": id, "name": name, "arguments": arguments}).to_string();
        self.stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .map_err(|e| format!("the client's stdin: {e}"))?;
        let answer = tokio::time::timeout(CALL_BOUND, self.lines.next_line())
            .await
            .map_err(|_| format!("{name} got no answer within {CALL_BOUND:?}"))?
            .map_err(|e| format!("the client's stdout: {e}"))?
            .ok_or("the TypeScript client exited")?;
        let answer: Value =
            serde_json::from_str(&answer).map_err(|e| format!("not JSON ({e}): {answer}"))?;
        if answer["id"] != id {
            return Err(format!("answer for another request: {answer}"));
        }
        if let Some(error) = answer.get("error") {
            return Err(format!("{name} {arguments}: {error}"));
        }
        Ok(answer["result"].clone())
    }

    /// A call that must not be refused: its structured content.
    pub async fn ok(&mut self, name: &str, arguments: Value) -> Result<Value, String> {
        let result = self.call(name, arguments.clone()).await?;
        if result["isError"] == true {
            return Err(format!("{name} {arguments} refused: {result}"));
        }
        Ok(result["structuredContent"].clone())
    }

    pub async fn close(mut self) {
        drop(self.stdin);
        let _ = tokio::time::timeout(Duration::from_secs(20), self.child.wait()).await;
    }
}
