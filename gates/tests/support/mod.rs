//! Shared pieces of the MCP tests (a row's gate scenario is run by `common::row_meets_target`):
//! an in-test HTTP-aware relay for the faults a TCP toxic cannot express (one leg of the link
//! blackholed or flapping by request), and proxy-log helpers (the reaper for daemons a test's
//! proxy started is `harness::ReapPort`; the raw SSE reader is `harness::sse_stream`).
#![allow(dead_code)]

pub mod relay;
pub mod scaffold;
pub mod tabs;
pub mod tools;
pub mod ts_agent;
pub mod xml;

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
