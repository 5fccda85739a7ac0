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

#[allow(dead_code)]
#[path = "common/fixture_page.rs"]
mod fixture_page;
#[allow(dead_code)]
#[path = "common/stdio_agent.rs"]
mod stdio_agent;

use std::time::{Duration, Instant};

use harness::OwnedDaemon;
use serde_json::{Value, json};
use stdio_agent::Agent;

const WARM_UP: usize = 300;
const SAMPLES: usize = 3000;
/// Alternating blocks per condition, so drifting load hits both alike.
const BLOCKS: usize = 5;
const AGENTS: usize = 8;
const CALLS_PER_AGENT: usize = 400;

/// `reticle_query` on the fixture's sign-in button; the answer, checked to have found it.
async fn query(agent: &mut Agent) -> Value {
    let answer = agent
        .call(
            "tools/call",
            json!({"name": "reticle_query", "arguments": {"sessionId": "bench", "testid": "login-submit"}}),
        )
        .await;
    let content = &answer["result"]["structuredContent"];
    assert_eq!(content["count"], 1, "{answer}");
    answer
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let daemon = OwnedDaemon::start().await;
    let page = fixture_page::open(&daemon).await;

    let mut agent = Agent::start(daemon.port(), daemon.state_dir());
    let init = agent.initialize().await;
    assert!(init.get("result").is_some(), "{init}");
    for _ in 0..WARM_UP {
        query(&mut agent).await;
    }
    let mut recording = Vec::with_capacity(SAMPLES);
    let mut quiet = Vec::with_capacity(SAMPLES);
    for block in 0..2 * BLOCKS {
        let on = block % 2 == 0;
        page.tab.set_network_recording(on).await.unwrap();
        let samples = if on { &mut recording } else { &mut quiet };
        for _ in 0..SAMPLES / BLOCKS {
            let started = Instant::now();
            query(&mut agent).await;
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
    page.tab.set_network_recording(false).await.unwrap();

    let mut agents = Vec::new();
    for _ in 0..AGENTS {
        let mut a = Agent::start(daemon.port(), daemon.state_dir());
        a.initialize().await;
        for _ in 0..20 {
            query(&mut a).await;
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
                    query(&mut a).await;
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
