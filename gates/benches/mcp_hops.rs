//! Benchmarks of hops 1 and 2, measured as an agent sees them (a process on `reticle mcp`'s
//! stdio): a `tools/call` round trip that needs no browser; a cold `initialize` with no daemon
//! running; the time from a stream drop to the -32001 answer of a call in flight; and the time
//! to a successful call after the daemon is killed.
//!
//! Run (release binary under test):
//!   cargo build --release -p reticle
//!   RETICLE_BIN=$PWD/target/release/reticle cargo bench -p gates --bench mcp_hops

#[allow(dead_code)]
#[path = "../tests/support/relay.rs"]
mod relay;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use harness::{OwnedDaemon, free_port, marker, poll};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

const BOUND: Duration = Duration::from_secs(30);
/// How long the call caught by a stream drop runs at the daemon: longer than the measurement,
/// short enough to wait out between rounds.
const SLEEP_MS: u64 = 1000;

/// `reticle mcp` on piped stdio.
struct Agent {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    next: u64,
}

impl Agent {
    fn start(port: u16, state: &Path, env: &[(&str, &str)]) -> Self {
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
        for (key, value) in env {
            command.env(key, value);
        }
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

    async fn send(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next;
        self.next += 1;
        let line = json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}).to_string();
        self.stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
        id
    }

    async fn answer(&mut self, id: u64) -> Value {
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

    async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params).await;
        self.answer(id).await
    }

    async fn initialize(&mut self) -> Value {
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

    async fn sessions(&mut self) -> Value {
        self.call(
            "tools/call",
            json!({"name":"reticle_sessions","arguments":{}}),
        )
        .await
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

fn summary(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{name}: n={} median={:.3} ms p90={:.3} ms p99={:.3} ms min={:.3} ms max={:.3} ms",
        samples.len(),
        ms(at(0.5)),
        ms(at(0.9)),
        ms(at(0.99)),
        ms(samples[0]),
        ms(*samples.last().unwrap())
    );
}

async fn round_trip() {
    let state = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut agent = Agent::start(port, state.path(), &[]);
    agent.initialize().await;
    poll::until("a first call", BOUND, async || {
        agent.sessions().await.get("result").map(|_| ())
    })
    .await;
    for _ in 0..500 {
        agent.sessions().await;
    }
    let mut samples = Vec::new();
    for _ in 0..5000 {
        let start = Instant::now();
        let answer = agent.sessions().await;
        samples.push(start.elapsed());
        assert!(answer.get("result").is_some(), "{answer}");
    }
    summary(
        "tools/call round trip (agent -> proxy -> daemon -> agent)",
        samples,
    );
    drop(agent);
    marker::end_marked_listeners(port);
}

async fn cold_initialize() {
    let mut samples = Vec::new();
    for _ in 0..30 {
        let state = tempfile::tempdir().unwrap();
        let port = free_port();
        let start = Instant::now();
        let mut agent = Agent::start(port, state.path(), &[]);
        let answer = agent.initialize().await;
        samples.push(start.elapsed());
        assert!(answer["result"]["protocolVersion"].is_string());
        drop(agent);
        marker::end_marked_listeners(port);
    }
    summary(
        "cold initialize, no daemon running (spawn to answer)",
        samples,
    );
}

async fn drop_to_answer() {
    let state = tempfile::tempdir().unwrap();
    let daemon = OwnedDaemon::builder()
        .env("RETICLE_TEST_CATALOGUE", "+reticle_test_sleep")
        .start()
        .await;
    let relay = relay::Relay::start(daemon.port()).await;
    let mut agent = Agent::start(relay.port, state.path(), &[]);
    agent.initialize().await;
    let mut samples = Vec::new();
    for _ in 0..30 {
        poll::until("the link to be up", BOUND, async || {
            agent.sessions().await.get("result").map(|_| ())
        })
        .await;
        // The previous round's call runs on at the daemon after its answer was given up for
        // lost; wait it out, so the next check sees this round's call and no other.
        poll::until("the daemon idle", BOUND, async || {
            let status = daemon.status().await?;
            (status.calls_in_flight == 0).then_some(())
        })
        .await;
        let id = agent
            .send(
                "tools/call",
                json!({"name":"reticle_test_sleep","arguments":{"ms":SLEEP_MS}}),
            )
            .await;
        poll::until("the call to run at the daemon", BOUND, async || {
            let status = daemon.status().await?;
            (status.calls_in_flight >= 1).then_some(())
        })
        .await;
        let start = Instant::now();
        relay.reset_streams();
        let answer = agent.answer(id).await;
        samples.push(start.elapsed());
        assert_eq!(answer["error"]["code"], -32001, "{answer}");
    }
    summary("stream drop -> -32001 for the call in flight", samples);
}

async fn recovery_after_kill() {
    let state = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut agent = Agent::start(port, state.path(), &[]);
    agent.initialize().await;
    let mut samples = Vec::new();
    for _ in 0..15 {
        poll::until("a call", BOUND, async || {
            agent.sessions().await.get("result").map(|_| ())
        })
        .await;
        let pid = harness::ports::listeners(port)[0].pid;
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
        poll::until("the daemon to die", BOUND, async || {
            (!harness::ports::pid_alive(pid)).then_some(())
        })
        .await;
        let start = Instant::now();
        loop {
            if agent.sessions().await.get("result").is_some() {
                break;
            }
        }
        samples.push(start.elapsed());
    }
    summary("daemon SIGKILLed -> next successful tools/call", samples);
    drop(agent);
    marker::end_marked_listeners(port);
}

#[tokio::main]
async fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let bin: PathBuf = harness::binaries::reticle();
    println!("binary under test: {}", bin.display());
    round_trip().await;
    cold_initialize().await;
    drop_to_answer().await;
    recovery_after_kill().await;
}
