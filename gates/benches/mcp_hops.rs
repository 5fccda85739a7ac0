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
#[path = "common/stdio_agent.rs"]
mod stdio_agent;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use harness::{OwnedDaemon, free_port, marker, poll};
use serde_json::{Value, json};
use stdio_agent::Agent;

const BOUND: Duration = Duration::from_secs(30);
/// How long the call caught by a stream drop runs at the daemon: longer than the measurement,
/// short enough to wait out between rounds.
const SLEEP_MS: u64 = 1000;

/// `reticle_sessions`, the call that needs no browser.
async fn sessions(agent: &mut Agent) -> Value {
    agent
        .call(
            "tools/call",
            json!({"name":"reticle_sessions","arguments":{}}),
        )
        .await
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
    let mut agent = Agent::start(port, state.path());
    agent.initialize().await;
    poll::until("a first call", BOUND, async || {
        sessions(&mut agent).await.get("result").map(|_| ())
    })
    .await;
    for _ in 0..500 {
        sessions(&mut agent).await;
    }
    let mut samples = Vec::new();
    for _ in 0..5000 {
        let start = Instant::now();
        let answer = sessions(&mut agent).await;
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
        let mut agent = Agent::start(port, state.path());
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
    let mut agent = Agent::start(relay.port, state.path());
    agent.initialize().await;
    let mut samples = Vec::new();
    for _ in 0..30 {
        poll::until("the link to be up", BOUND, async || {
            sessions(&mut agent).await.get("result").map(|_| ())
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
    let mut agent = Agent::start(port, state.path());
    agent.initialize().await;
    let mut samples = Vec::new();
    for _ in 0..15 {
        poll::until("a call", BOUND, async || {
            sessions(&mut agent).await.get("result").map(|_| ())
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
            if sessions(&mut agent).await.get("result").is_some() {
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
