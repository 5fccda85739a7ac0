//! Shared pieces of the MCP tests (a row's gate scenario is run by `common::row_meets_target`):
//! an in-test HTTP-aware relay for the faults a TCP toxic cannot express (one leg of the link
//! blackholed or flapping by request), a raw SSE reader on a daemon, and proxy-log helpers (the
//! reaper for daemons a test's proxy started is `harness::ReapPort`).
#![allow(dead_code)]

pub mod relay;
pub mod tools;

use std::time::Duration;

use harness::poll;
use serde_json::Value;

pub const BOUND: Duration = Duration::from_secs(20);

/// The daemon answering on the port, waiting for one.
pub async fn daemon_on(port: u16) -> reticle::wire::StatusReport {
    poll::until("a daemon to answer /status", BOUND, async || {
        reticle::probe::fetch_status(port, Duration::from_millis(500)).await
    })
    .await
}

/// SIGKILLs a pid and waits until it is gone.
pub async fn kill_and_wait(pid: u32) {
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
    poll::until("the process to die", BOUND, async || {
        (!harness::ports::pid_alive(pid)).then_some(())
    })
    .await;
}

/// Proxy log events named `event`.
pub fn events(log: &[Value], event: &str) -> Vec<Value> {
    log.iter()
        .filter(|e| e["event"] == event)
        .cloned()
        .collect()
}

/// A raw MCP stream opened straight on a daemon (no proxy), read event by event.
pub struct SseReader {
    response: reqwest::Response,
    buf: String,
    pub post_url: String,
}

impl SseReader {
    /// Opens `GET /mcp/sse` and reads the endpoint event.
    pub async fn open(port: u16) -> Self {
        let client = reqwest::Client::builder().no_proxy().build().unwrap();
        let response = client
            .get(format!("http://127.0.0.1:{port}/mcp/sse"))
            .send()
            .await
            .expect("the daemon answers GET /mcp/sse");
        assert_eq!(response.status(), 200);
        let mut reader = Self {
            response,
            buf: String::new(),
            post_url: String::new(),
        };
        let (event, data) = reader.next_event().await.expect("a first event");
        assert_eq!(event, "endpoint", "the first event names the POST path");
        assert!(data.starts_with("/mcp/message?sessionId="), "{data}");
        reader.post_url = format!("http://127.0.0.1:{port}{data}");
        reader
    }

    /// The next event (name, data), skipping keep-alive comments; `None` when the stream ends.
    pub async fn next_event(&mut self) -> Option<(String, String)> {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let mut event = "message".to_string();
                let mut data: Option<String> = None;
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("event:") {
                        event = v.trim().to_string();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        let v = v.strip_prefix(' ').unwrap_or(v);
                        data = Some(match data {
                            Some(d) => format!("{d}\n{v}"),
                            None => v.to_string(),
                        });
                    }
                }
                match data {
                    Some(data) => return Some((event, data)),
                    None => continue,
                }
            }
            let chunk = self.response.chunk().await.ok()??;
            self.buf.push_str(&String::from_utf8_lossy(&chunk));
        }
    }

    /// The next `message` event's JSON.
    pub async fn next_message(&mut self) -> Value {
        loop {
            let (event, data) = tokio::time::timeout(BOUND, self.next_event())
                .await
                .expect("an event within the bound")
                .expect("the stream is open");
            if event == "message" {
                return serde_json::from_str(&data).unwrap();
            }
        }
    }

    /// POSTs one raw body to this session; the HTTP status.
    pub async fn post(&self, body: &str) -> u16 {
        reqwest::Client::builder()
            .no_proxy()
            .build()
            .unwrap()
            .post(&self.post_url)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .expect("the POST is answered")
            .status()
            .as_u16()
    }
}

/// An `initialize` request line with this id.
pub fn initialize_line(id: u64) -> String {
    serde_json::json!({
        "jsonrpc": "2.0", "id": id, "method": "initialize",
        "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "gate", "version": "1" } }
    })
    .to_string()
}

/// Prints the proxy log when the test that holds it panics (a failing gate shows its evidence).
pub struct LogOnFailure(pub harness::ProxyOptions);

impl Drop for LogOnFailure {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let text = std::fs::read_to_string(self.0.log_path()).unwrap_or_default();
            eprintln!(
                "---- proxy log {} ----\n{text}",
                self.0.log_path().display()
            );
        }
    }
}
