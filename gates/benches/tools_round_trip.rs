//! The agent-to-page round trip through all four hops, measured as an agent sees it: a process
//! writing `tools/call` lines to `reticle mcp`'s stdin (hop 1), the proxy's link to the daemon
//! (hop 2), the daemon's tool layer and bridge (hop 3 and 4), our SDK in Chromium answering the
//! `query` command on the fixture app, and back. One held-open link, measured in alternating
//! blocks with the tab's DevTools network recording on (as the CDP library leaves it: Chromium
//! copies every WebSocket frame into a DevTools event) and off (as in a browser nobody is
//! debugging); then calls per second with 8 agents (8 `reticle mcp` processes) calling at once,
//! recording off.
//!
//! Run (release binary under test):
//!   cargo build --release -p reticle
//!   RETICLE_BIN=$PWD/target/release/reticle cargo bench -p gates --bench tools_round_trip

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use harness::{BridgeClient, Browser, FixtureApp, OwnedDaemon, marker, poll};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

const BOUND: Duration = Duration::from_secs(30);
const WARM_UP: usize = 300;
const SAMPLES: usize = 3000;
/// Alternating blocks per condition, so drifting load hits both alike.
const BLOCKS: usize = 5;
const AGENTS: usize = 8;
const CALLS_PER_AGENT: usize = 400;

/// One agent: `reticle mcp` on piped stdio.
struct Agent {
    _child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    next: u64,
}

impl Agent {
    async fn start(port: u16, state: &Path) -> Self {
        let mut command = tokio::process::Command::new(harness::binaries::reticle());
        command
            .args(["mcp", "--port", &port.to_string()])
            .env("RETICLE_STATE_DIR", state)
            .env(marker::MARKER_VAR, marker::marker())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        let mut child = command.spawn().expect("reticle mcp starts");
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut agent = Self {
            _child: child,
            stdin,
            lines,
            next: 1,
        };
        let init = agent
            .request(
                "initialize",
                json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}),
            )
            .await;
        assert!(init.get("result").is_some(), "{init}");
        agent
            .stdin
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
            .await
            .unwrap();
        agent
    }

    async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        let line = json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}).to_string();
        self.stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
        loop {
            let line = tokio::time::timeout(BOUND, self.lines.next_line())
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

    async fn query(&mut self) -> Value {
        let answer = self
            .request(
                "tools/call",
                json!({"name": "reticle_query", "arguments": {"sessionId": "bench", "testid": "login-submit"}}),
            )
            .await;
        let content = &answer["result"]["structuredContent"];
        assert_eq!(content["count"], 1, "{answer}");
        answer
    }
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let daemon = OwnedDaemon::start().await;
    let app = FixtureApp::start().await;
    let browser = Browser::launch().await.expect("chromium launches");
    let url = app.url(&format!(
        "/?reticlePort={}&reticleToken={}&session=bench",
        daemon.port(),
        daemon.token()
    ));
    let tab = browser.open(&url).await.unwrap();
    let bridge = BridgeClient::new(daemon.port());
    poll::until("the fixture page as a session", BOUND, async || {
        bridge.session("bench").await.map(|_| ())
    })
    .await;

    let mut agent = Agent::start(daemon.port(), daemon.state_dir()).await;
    for _ in 0..WARM_UP {
        agent.query().await;
    }
    let mut recording = Vec::with_capacity(SAMPLES);
    let mut quiet = Vec::with_capacity(SAMPLES);
    for block in 0..2 * BLOCKS {
        let on = block % 2 == 0;
        tab.set_network_recording(on).await.unwrap();
        let samples = if on { &mut recording } else { &mut quiet };
        for _ in 0..SAMPLES / BLOCKS {
            let started = Instant::now();
            agent.query().await;
            samples.push(started.elapsed());
        }
    }
    for (condition, samples) in [
        ("DevTools network recording on", &mut recording),
        ("recording off", &mut quiet),
    ] {
        samples.sort();
        println!(
            "reticle_query round trip, 4 hops + Chromium, one held-open link, {condition}: median {:.3} ms, p90 {:.3} ms, p99 {:.3} ms, max {:.3} ms ({SAMPLES} samples after {WARM_UP} warm-up)",
            percentile(samples, 0.5),
            percentile(samples, 0.9),
            percentile(samples, 0.99),
            percentile(samples, 1.0),
        );
    }
    tab.set_network_recording(false).await.unwrap();

    let mut agents = Vec::new();
    for _ in 0..AGENTS {
        let mut a = Agent::start(daemon.port(), daemon.state_dir()).await;
        for _ in 0..20 {
            a.query().await;
        }
        agents.push(a);
    }
    let started = Instant::now();
    let tasks: Vec<_> = agents
        .into_iter()
        .map(|mut a| {
            tokio::spawn(async move {
                let mut times = Vec::with_capacity(CALLS_PER_AGENT);
                for _ in 0..CALLS_PER_AGENT {
                    let t = Instant::now();
                    a.query().await;
                    times.push(t.elapsed());
                }
                times
            })
        })
        .collect();
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.unwrap());
    }
    let elapsed = started.elapsed();
    all.sort();
    println!(
        "{AGENTS} concurrent agents, {} calls: {:.0} calls/s; per-call median {:.3} ms, p99 {:.3} ms",
        all.len(),
        all.len() as f64 / elapsed.as_secs_f64(),
        percentile(&all, 0.5),
        percentile(&all, 0.99),
    );
    let status = daemon.status().await.unwrap();
    println!(
        "daemon calls in flight at the end: {}",
        status.calls_in_flight
    );
}
