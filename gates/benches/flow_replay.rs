//! What a replay costs over the same steps issued one by one: a saved 20-step flow (each step a
//! click on the fixture's counter with `until` its `counter.changed` signal) replayed with
//! `reticle_flow_replay`, against a reload (`reticle_navigate {reload}`, as a replay starts
//! with) followed by the same 20 steps as `reticle_act_and_wait` calls, as an agent sees them
//! (`tools/call` lines into `reticle mcp`). Rounds alternate so drifting load hits both alike;
//! every call must answer `yes`.
//!
//! Run (the binary under test):
//!   cargo build --workspace --bins
//!   RETICLE_BIN=$PWD/target/debug/reticle cargo bench -p gates --bench flow_replay

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

const STEPS: usize = 20;
const ROUNDS: usize = 10;

fn step() -> Value {
    json!({"target": {"testid": "counter-increment"}, "action": "click",
           "until": {"kind": "signal", "name": "counter.changed"}})
}

async fn tool(agent: &mut Agent, name: &str, mut arguments: Value) -> Value {
    arguments["sessionId"] = json!("bench");
    let answer = agent
        .call("tools/call", json!({"name": name, "arguments": arguments}))
        .await;
    let content = answer["result"]["structuredContent"].clone();
    assert_ne!(answer["result"]["isError"], true, "{name}: {answer}");
    content
}

fn median(samples: &mut [Duration]) -> f64 {
    samples.sort();
    samples[samples.len() / 2].as_secs_f64() * 1000.0
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let project = tempfile::tempdir().unwrap();
    let daemon = OwnedDaemon::builder()
        .env("RETICLE_ADVERTISE_ALL_TOOLS", "1")
        .env(
            "RETICLE_PROJECT_DIR",
            project.path().to_string_lossy().to_string(),
        )
        .start()
        .await;
    let _page = fixture_page::open(&daemon).await;
    let mut agent = Agent::start(daemon.port(), daemon.state_dir());
    agent.initialize().await;
    let steps: Vec<Value> = (0..STEPS).map(|_| step()).collect();
    tool(
        &mut agent,
        "reticle_flow_save",
        json!({"name": "counter-20", "startPath": "/", "steps": steps}),
    )
    .await;

    let mut replays = Vec::with_capacity(ROUNDS);
    let mut singles = Vec::with_capacity(ROUNDS);
    for round in 0..2 * ROUNDS + 2 {
        let started = Instant::now();
        if round % 2 == 0 {
            let replayed = tool(
                &mut agent,
                "reticle_flow_replay",
                json!({"name": "counter-20"}),
            )
            .await;
            assert_eq!(replayed["verified"], "yes", "{replayed}");
            if round >= 2 {
                replays.push(started.elapsed());
            }
        } else {
            let reloaded = tool(&mut agent, "reticle_navigate", json!({"reload": true})).await;
            assert_eq!(reloaded["confirmed"], true, "{reloaded}");
            for _ in 0..STEPS {
                let judged = tool(&mut agent, "reticle_act_and_wait", step()).await;
                assert_eq!(judged["verified"], "yes", "{judged}");
            }
            if round >= 2 {
                singles.push(started.elapsed());
            }
        }
    }
    let replay = median(&mut replays);
    let single = median(&mut singles);
    println!(
        "{STEPS}-step flow, median of {ROUNDS} rounds each (after one warm-up round each): reticle_flow_replay {replay:.1} ms; reload + {STEPS} reticle_act_and_wait calls {single:.1} ms; replay/individual = {:.3}",
        replay / single
    );
}
