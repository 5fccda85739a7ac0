//! The benches' agent: `reticle mcp` on piped stdio, spoken to line by line the way a coding
//! agent does (no MCP library in the measured path). It writes requests and reads answers; it
//! must not measure anything itself.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use harness::marker;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

/// How long any answer may take before the bench gives up.
const ANSWER_BOUND: Duration = Duration::from_secs(30);

/// One agent on `reticle mcp --port <port>`.
pub struct Agent {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    next: u64,
}

impl Agent {
    /// Spawns `reticle mcp` (the binary under test) with a private state dir; no handshake yet.
    pub fn start(port: u16, state: &Path) -> Self {
        let mut command = tokio::process::Command::new(harness::binaries::reticle());
        command
            .args(["mcp", "--port", &port.to_string()])
            .env("RETICLE_STATE_DIR", state)
            .env("RETICLE_IDLE_SHUTDOWN_MS", "20000")
            .env(marker::MARKER_VAR, marker::marker())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        let mut child = command.spawn().expect("reticle mcp starts");
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Self {
            child,
            stdin,
            lines,
            next: 1,
        }
    }

    /// Writes one request; its id.
    pub async fn send(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next;
        self.next += 1;
        let line = json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}).to_string();
        self.stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
        id
    }

    /// Reads until the answer to `id` (anything else on the way is skipped).
    pub async fn answer(&mut self, id: u64) -> Value {
        loop {
            let line = tokio::time::timeout(ANSWER_BOUND, self.lines.next_line())
                .await
                .expect("an answer within the bound")
                .unwrap()
                .expect("stdout open");
            let value: Value = serde_json::from_str(&line).unwrap();
            if value["id"] == id {
                return value;
            }
        }
    }

    /// One request and its answer.
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params).await;
        self.answer(id).await
    }

    /// `initialize` and `notifications/initialized`; the answer.
    pub async fn initialize(&mut self) -> Value {
        let answer = self
            .call(
                "initialize",
                json!({"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}),
            )
            .await;
        let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"}).to_string();
        self.stdin
            .write_all(format!("{note}\n").as_bytes())
            .await
            .unwrap();
        answer
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}
