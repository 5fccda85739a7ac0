//! `bench-verify`: benchmark of `reticle verify` ([`verify_figures`], issue 12) and of
//! `reticle_verify`'s scheduling ([`suite_figures`], issue 11), read from the trace
//! (`RETICLE_TRACE`) of a daemon serving a private project. It measures and prints Markdown; it
//! must not judge a row.
//!
//! Run with `RETICLE_BIN=target/release/reticle target/release/bench-verify`.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use gates::scenarios::verify_rig::{VerifyRig, click_flow};
use reticle::config::env;
use reticle::wire::trace::{TRACE_EVENT, key, span};
use serde_json::{Value, json};

const FLOWS: usize = 20;
const STEPS: usize = 10;
const SUITE_FLOWS: usize = 50;

/// One closed span with its times (ms since the epoch).
struct Timed {
    span: String,
    call_id: String,
    depth: u64,
    start: f64,
    end: f64,
}

impl Timed {
    fn ms(&self) -> f64 {
        self.end - self.start
    }
}

/// Every trace line of the daemon log, timed: a line's `t` is when the span closed (to the ms)
/// and its `ms` how long it was open.
fn timed_spans(log: &Path) -> Vec<Timed> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|v| v["event"] == TRACE_EVENT)
        .filter_map(|v| {
            let closed = time::OffsetDateTime::parse(
                v["t"].as_str()?,
                &time::format_description::well_known::Rfc3339,
            )
            .ok()?;
            let end = closed.unix_timestamp_nanos() as f64 / 1e6;
            let ms = v[key::MS].as_f64()?;
            Some(Timed {
                span: v[key::SPAN].as_str()?.to_string(),
                call_id: v[key::CALL_ID].as_str()?.to_string(),
                depth: v[key::DEPTH].as_u64()?,
                start: end - ms,
                end,
            })
        })
        .collect()
}

/// When (ms since the epoch) the daemon log first says `event` at or after `since` for a line
/// whose `field` satisfies `matches`.
fn first_event(
    log: &str,
    since: f64,
    event: &str,
    field: &str,
    matches: impl Fn(&str) -> bool,
) -> Option<f64> {
    log.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|v| v["event"] == event && v[field].as_str().is_some_and(&matches))
        .filter_map(|v| {
            let t = time::OffsetDateTime::parse(
                v["t"].as_str()?,
                &time::format_description::well_known::Rfc3339,
            )
            .ok()?;
            Some(t.unix_timestamp_nanos() as f64 / 1e6)
        })
        .find(|t| *t >= since)
}

/// What launch to first step is made of, from the daemon log (ms after verify was spawned):
/// job 1's MCP link open, its first page's session connected, the replay's reload of it begun
/// (the lease and the replay call made), the page back on its start path (`?` for both when
/// the replay used the page as opened: no reload).
fn launch_breakdown(log: &Path, since: f64) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let first_flow = |s: &str| s.ends_with("-j1-f1");
    let link = first_event(&text, since, "mcp_client_connected", "agent", |a| {
        a.starts_with("verify-") && a.ends_with("-j1")
    });
    let page = first_event(
        &text,
        since,
        "bridge_session_connected",
        "session",
        first_flow,
    );
    let reload = first_event(&text, since, "bridge_session_closed", "session", first_flow);
    let back = reload
        .and_then(|r| first_event(&text, r, "bridge_session_connected", "session", first_flow));
    let at = |t: Option<f64>| t.map_or("?".to_string(), |t| format!("{:.0}", t - since));
    format!(
        "link {} / page connected {} / reload begun {} / page back {}",
        at(link),
        at(page),
        at(reload),
        at(back)
    )
}

/// The spans of each call, in the order they opened.
fn by_call(spans: Vec<Timed>) -> BTreeMap<String, Vec<Timed>> {
    let mut calls: BTreeMap<String, Vec<Timed>> = BTreeMap::new();
    for s in spans {
        calls.entry(s.call_id.clone()).or_default().push(s);
    }
    for spans in calls.values_mut() {
        spans.sort_by(|a, b| a.start.total_cmp(&b.start));
    }
    calls
}

/// Reticle's own ms per step in one flow replay call, and the page's ms per step: the steps
/// run from the first command after the reload to the start path (if the replay made one) to
/// the end of the last wait.
fn own_per_step(spans: &[Timed]) -> Option<(f64, f64)> {
    let commands: Vec<&Timed> = spans
        .iter()
        .filter(|s| s.span == span::BROWSER_COMMAND)
        .collect();
    let waits: Vec<&Timed> = spans
        .iter()
        .filter(|s| s.span == span::PREDICATE_WAIT)
        .collect();
    if waits.len() != STEPS {
        return None;
    }
    // Every step is the same click, so each makes as many commands; one command over a whole
    // number of steps is the reload to the start path (a replay that used its fresh page as
    // opened makes none), and the steps' commands follow it.
    let steps_commands = &commands.get(commands.len() % STEPS..)?;
    let first = steps_commands.first()?.start;
    let last = waits.iter().map(|w| w.end).fold(f64::MIN, f64::max);
    let page: f64 = steps_commands.iter().map(|c| c.ms()).sum::<f64>()
        + waits.iter().map(|w| w.ms()).sum::<f64>();
    let whole = last - first;
    Some(((whole - page) / STEPS as f64, page / STEPS as f64))
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn ms(value: &Value) -> f64 {
    value.as_u64().unwrap_or(0) as f64
}

/// Launch to first step, from verify's run JSON: its `launchToFirstReplayMs` plus the arrival
/// of the flow that replayed first (its duration less its steps').
fn launch_to_first_step(run: &Value) -> f64 {
    let flows = run["flows"].as_array().cloned().unwrap_or_default();
    let arrival = |flow: &Value| {
        let steps: f64 = flow["steps"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| ms(&s["durationMs"]))
            .sum();
        ms(&flow["durationMs"]) - steps
    };
    // The first flow's job took it first; every flow's arrival is about the same.
    let first = flows.first().cloned().unwrap_or_default();
    ms(&run["launchToFirstReplayMs"]) + arrival(&first)
}

async fn save_flows(rig: &VerifyRig, prefix: &str, count: usize, steps: usize) {
    let flow = click_flow("f", "counter-increment", "counter.changed", 8000);
    let step = flow["steps"][0].clone();
    for i in 1..=count {
        let mut flow = flow.clone();
        flow["name"] = json!(format!("{prefix}-{i:02}"));
        flow["steps"] = json!(vec![step.clone(); steps]);
        rig.save(flow).await.expect("the flow is saved");
    }
}

/// Part 1: 20 flows of 10 steps (a click on the fixture's Increment button, awaiting its
/// `counter.changed` signal) saved through the tool layer, then `reticle verify` with `--jobs 1`
/// and `--jobs 2`. Per flow, from the trace of its replay call: the page's time is every
/// `browser.command` and `predicate.wait` span in the steps, Reticle's own time per step is the
/// steps' span less the page's ([`own_per_step`]), and launch to first step is
/// [`launch_to_first_step`].
async fn verify_figures(bin: &Path) {
    let rig = VerifyRig::start_with(&[(env::TRACE, "1")])
        .await
        .expect("the rig starts");
    save_flows(&rig, "flow", FLOWS, STEPS).await;
    println!(
        "| jobs | wall | flows yes | Reticle's own time per step, median of flows (min-max) | page's time per step, median | launch to first step | of which, ms after spawn (daemon log) |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for jobs in ["1", "2"] {
        let since = time::OffsetDateTime::now_utc().unix_timestamp_nanos() as f64 / 1e6;
        let out = rig.project.path().join(format!("run-{jobs}.json"));
        let out_arg = out.to_string_lossy().to_string();
        let clock = Instant::now();
        let ran = rig
            .verify(bin, &rig.url(""), &["--jobs", jobs, "--json", &out_arg])
            .await;
        let wall = clock.elapsed().as_secs_f64();
        let run: Value = std::fs::read_to_string(&out)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_else(|| panic!("no run JSON (exit {:?}): {}", ran.code, ran.said()));
        let yes = run["flows"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|f| f["verified"] == "yes")
            .count();
        // The replay calls of this run: those that began after it did.
        let calls = by_call(timed_spans(&rig.daemon.log_path()));
        let fresh: Vec<(f64, f64)> = calls
            .values()
            .filter(|spans| spans.first().is_some_and(|s| s.start >= since))
            .filter_map(|spans| own_per_step(spans))
            .collect();
        let own: Vec<f64> = fresh.iter().map(|f| f.0).collect();
        let low = own.iter().copied().fold(f64::MAX, f64::min);
        let high = own.iter().copied().fold(f64::MIN, f64::max);
        let page = median(fresh.iter().map(|f| f.1).collect());
        println!(
            "| {jobs} | {wall:.1} s | {yes}/{FLOWS} | {:.2} ms ({low:.2}-{high:.2}, {} flows) | {page:.1} ms | {:.0} ms | {} |",
            median(own),
            fresh.len(),
            launch_to_first_step(&run),
            launch_breakdown(&rig.daemon.log_path(), since)
        );
    }
    rig.daemon.shutdown().await;
}

/// Part 2: 50 saved flows, then one `reticle_verify {"action":"flows"}` on a fixture tab. From
/// the trace: the call's start to its first page command (the first flow's reload to its start
/// path), which is listing, loading and scheduling before any step runs.
async fn suite_figures() {
    let rig = VerifyRig::start_with(&[(env::TRACE, "1")])
        .await
        .expect("the rig starts");
    save_flows(&rig, "suite", SUITE_FLOWS, 1).await;
    let browser = harness::Browser::launch().await.expect("chromium starts");
    let session = "bench-suite";
    let _tab = browser
        .open(&rig.url(&format!("&__reticle_session={session}")))
        .await
        .expect("the tab opens");
    rig.await_session("the tab connected", session).await;
    let answer = rig
        .run_tool(
            "reticle_verify",
            json!({"action": "flows", "sessionId": session}),
        )
        .await
        .expect("reticle_verify answers");
    let suite = &answer["structuredContent"];
    let flows = suite["flows"].as_array().map_or(0, Vec::len);
    let calls = by_call(timed_spans(&rig.daemon.log_path()));
    // The verify call: the one whose spans hold a command per flow and more.
    let scheduling = calls.values().find_map(|spans| {
        let root = spans
            .iter()
            .find(|s| s.depth == 0 && s.span == span::TOOL_HANDLER)?;
        let commands = spans.iter().filter(|s| s.span == span::BROWSER_COMMAND);
        let first = commands.clone().next()?;
        (commands.count() >= SUITE_FLOWS).then_some(first.start - root.start)
    });
    println!(
        "| flows saved | flows answered | suite verdict | call start to the first flow's first page command |"
    );
    println!("| --- | --- | --- | --- |");
    println!(
        "| {SUITE_FLOWS} | {flows} | {} | {} |",
        suite["verified"],
        scheduling.map_or("not found in the trace".into(), |ms| format!("{ms:.0} ms"))
    );
    browser.close().await;
    rig.daemon.shutdown().await;
}

#[tokio::main]
async fn main() {
    let bin = harness::binaries::reticle();
    verify_figures(&bin).await;
    println!();
    suite_figures().await;
}
