//! Benchmark of `reticle verify`: 20 flows of 10 steps each (a click on the fixture app's
//! Increment button, its consequence the `counter.changed` signal) saved through the tool layer,
//! then verify run with `--jobs 1` and `--jobs 2` against a daemon serving a private project.
//! From each run's JSON: the wall time, Reticle's own time per step (a step's duration less the
//! time its judge waited on the page, so the act's round trip to the page is counted as ours: an
//! upper bound), and launch to first step (process start to the first replay call, plus the
//! first flow's arrival at its start path). Run with
//! `RETICLE_BIN=target/debug/reticle target/debug/bench-verify`; prints a Markdown table.

use std::time::Instant;

use gates::scenarios::verify_cli::{VerifyRig, click_flow};
use serde_json::{Value, json};

const FLOWS: usize = 20;
const STEPS: usize = 10;

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn ms(value: &Value) -> f64 {
    value.as_u64().unwrap_or(0) as f64
}

/// (wall s, own ms per step median, step ms median, launch to first step ms, flows yes)
fn measure(run: &Value, wall: f64) -> (f64, f64, f64, f64, usize) {
    let flows = run["flows"].as_array().cloned().unwrap_or_default();
    let steps: Vec<&Value> = flows
        .iter()
        .flat_map(|f| f["steps"].as_array().into_iter().flatten())
        .collect();
    let own = steps
        .iter()
        .map(|s| ms(&s["durationMs"]) - ms(&s["waitedMs"]))
        .collect();
    let whole = steps.iter().map(|s| ms(&s["durationMs"])).collect();
    let first = flows.first().cloned().unwrap_or_default();
    let steps_of_first: f64 = first["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| ms(&s["durationMs"]))
        .sum();
    let arrival = ms(&first["durationMs"]) - steps_of_first;
    let launch = ms(&run["launchToFirstReplayMs"]) + arrival;
    let yes = flows.iter().filter(|f| f["verified"] == "yes").count();
    (wall, median(own), median(whole), launch, yes)
}

#[tokio::main]
async fn main() {
    let rig = VerifyRig::start().await.expect("the rig starts");
    let flow = click_flow("f", "counter-increment", "counter.changed", 8000);
    let step = flow["steps"][0].clone();
    for i in 1..=FLOWS {
        let mut flow = flow.clone();
        flow["name"] = json!(format!("flow-{i:02}"));
        flow["steps"] = json!(vec![step.clone(); STEPS]);
        rig.save(flow).await.expect("the flow is saved");
    }
    let bin = harness::binaries::reticle();
    println!(
        "| jobs | wall | flows yes | Reticle's own time per step, median (upper bound) | step, median | launch to first step |"
    );
    println!("| --- | --- | --- | --- | --- | --- |");
    for jobs in ["1", "2"] {
        let out = rig.project.path().join(format!("run-{jobs}.json"));
        let out_arg = out.to_string_lossy().to_string();
        let clock = Instant::now();
        let ran = rig
            .verify(&bin, &rig.url(""), &["--jobs", jobs, "--json", &out_arg])
            .await;
        let wall = clock.elapsed().as_secs_f64();
        let run: Value = std::fs::read_to_string(&out)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_else(|| panic!("no run JSON (exit {:?}): {}", ran.code, ran.said()));
        let (wall, own, whole, launch, yes) = measure(&run, wall);
        println!(
            "| {jobs} | {wall:.1} s | {yes}/{FLOWS} | {own:.1} ms | {whole:.1} ms | {launch:.0} ms |"
        );
    }
    rig.daemon.shutdown().await;
}
