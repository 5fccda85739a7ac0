//! The soak: one held-open agent link (`reticle mcp` → a [`Nemesis`] fault proxy with no toxic →
//! a daemon the harness owns), rounds of calls with a deliberate idle gap between rounds, and a
//! record of what each round came to; [`Soak::judgement`] says what the record shows.
//!
//! It must not retry a call or reconnect on the agent's behalf: what the link does across a gap
//! is what is measured.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use harness::OwnedDaemon;
use serde::Serialize;
use serde_json::{Value, json};

use crate::fault;
use crate::history::{History, Op, OpType};
use crate::judge::{self, Judgement, RowOutcome};
use crate::nemesis::{LinkProxy, Nemesis};
use crate::scenarios::agent::{CALL_BOUND, RawAgent, events};
use crate::scenarios::kit::observe;
use crate::scenarios::{GateEnv, proxy_options};
use reticle::proxy::events as proxy_events;

/// The daemon's idle-shutdown bound during a soak: low, so every gap crosses it while the
/// stream is attached.
pub const IDLE_SHUTDOWN: Duration = Duration::from_secs(2);
/// How long the harness waits for a setup step or a reconnection it caused.
const BOUND: Duration = Duration::from_secs(20);

/// A bound that acts on an idle link, which a gap must outlast to put it to the test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Hazard {
    /// What acts (the name the soak's records and history line use).
    pub name: &'static str,
    /// After how long of idleness it acts.
    #[serde(rename = "ms")]
    pub bound_ms: u64,
}

/// Every bound that acts on an idle link here, read from the product's own constants. The gap
/// between rounds is a workload parameter, not synchronisation, chosen to outlast all of them.
/// Neither the daemon's MCP sessions (no reaper: a session lives as long as its stream) nor the
/// bridge's reaper (`RETICLE_SESSION_IDLE_MS`, pages only, and none is attached) is a hazard.
pub fn hazards() -> Vec<Hazard> {
    let hazard = |name, bound: Duration| Hazard {
        name,
        bound_ms: bound.as_millis() as u64,
    };
    vec![
        // The daemon's only traffic on an idle stream.
        hazard("sse_keepalive", reticle::mcp::transport::KEEPALIVE),
        // A stream silent this long is declared dead by the proxy.
        hazard("stream_stall", reticle::proxy::settings::STREAM_STALL),
        // A worker silent this long is killed and replaced by the supervisor.
        hazard("worker_silence", reticle::proxy::settings::WORKER_SILENCE),
        // Must never fire while the stream is attached.
        hazard("idle_shutdown", IDLE_SHUTDOWN),
    ]
}

/// What the harness does at the start of each idle gap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Between {
    /// Nothing: the link is left idle.
    Nothing,
    /// SIGKILLs the daemon and starts a new one on the same port (the recorder's negative
    /// control: it must see the drop and the new instance).
    KillDaemon,
}

/// A soak's parameters.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Rounds of calls; a gap precedes every round but the first.
    pub rounds: usize,
    /// Calls per round, one after another (`tools/call reticle_sessions`, `tools/list`, `ping`,
    /// in turn).
    pub calls: usize,
    /// The idle gap between rounds.
    pub idle: Duration,
    /// What the harness does at the start of each gap.
    pub between: Between,
}

impl Plan {
    /// The hazards this plan's gap outlasts.
    pub fn straddled(&self) -> Vec<Hazard> {
        hazards()
            .into_iter()
            .filter(|h| self.idle > Duration::from_millis(h.bound_ms))
            .collect()
    }
}

/// What one round came to. Link drops and instance changes include its preceding gap (a drop
/// logged just after a round's end counts in the next round).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RoundRecord {
    /// Its index, from 0.
    pub round: usize,
    /// Calls made in it.
    pub calls: usize,
    /// Answered with a result (a tool's `isError` result is counted in `refused` instead).
    pub ok: usize,
    /// Answered with a tool result that says `isError`.
    pub refused: usize,
    /// Answered -32001, by population.
    pub lost: BTreeMap<String, usize>,
    /// Answered with any other JSON-RPC error.
    pub other_errors: usize,
    /// Not answered within the call bound.
    pub unanswered: usize,
    /// `mcp_connection_lost` (stage `lost`) lines the proxy logged.
    pub link_drops: usize,
    /// Daemon instances that served this round's `reticle_sessions` calls.
    pub instances: Vec<String>,
    /// Times the serving instance differed from the one before it.
    pub instance_changes: usize,
}

impl RoundRecord {
    /// Calls that got an answer of any kind.
    pub fn answered(&self) -> usize {
        self.calls - self.unanswered
    }

    /// The progress line of this round.
    pub fn line(&self, of: usize) -> String {
        let lost: usize = self.lost.values().sum();
        format!(
            "round {}/{of}: {}/{} answered, {} ok, {lost} -32001, {} other errors, {} link drops, {} instance changes",
            self.round + 1,
            self.answered(),
            self.calls,
            self.ok,
            self.other_errors,
            self.link_drops,
            self.instance_changes
        )
    }
}

/// The whole soak in figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// The rounds' calls (the warm-up call is not one).
    pub calls: usize,
    /// Calls that got an answer of any kind.
    pub answered: usize,
    /// Calls answered with a result that is not a tool error.
    pub ok: usize,
    /// -32001 answers, by population.
    pub lost: BTreeMap<String, usize>,
    /// Other JSON-RPC errors.
    pub other_errors: usize,
    /// Calls not answered within the call bound.
    pub unanswered: usize,
    /// Link drops the proxy logged.
    pub link_drops: usize,
    /// Distinct daemon instances that served calls.
    pub instances: usize,
    /// Times the serving instance changed.
    pub instance_changes: usize,
    /// Answered calls (exactly once or not) over calls.
    pub answer_rate: f64,
    /// Calls answered with a result over calls.
    pub ok_rate: f64,
    /// Median call latency as the agent saw it (request written to answer read), answered calls.
    pub p50_ms: f64,
    /// 99th percentile (nearest rank) of the same.
    pub p99_ms: f64,
    /// From the first round's first call to the last answer, gaps included.
    pub wall_s: f64,
}

/// A finished soak.
#[derive(Debug, Clone)]
pub struct Soak {
    /// What was asked for.
    pub plan: Plan,
    /// What each round came to.
    pub rounds: Vec<RoundRecord>,
    /// The whole soak in figures.
    pub summary: Summary,
    /// Every call, answer, fault and observation, in order.
    pub history: History,
    /// Why the soak proves nothing, when its setup failed.
    pub setup_failed: Option<String>,
}

impl Soak {
    /// What the record shows: `survived` when every call was served and the link never dropped
    /// or changed daemon; `surfaced` when every call was answered exactly once but some were
    /// lost, refused or the link dropped; `silent` when a call was not answered exactly once;
    /// `inconclusive` when the soak never got going.
    pub fn judgement(&self) -> Judgement {
        if let Some(why) = &self.setup_failed {
            return Judgement::new(RowOutcome::Inconclusive, why.clone());
        }
        let calls = match judge::exactly_once(&self.history.ops()) {
            Ok(calls) => calls,
            Err(hang) => return hang,
        };
        let s = &self.summary;
        let figures = format!(
            "{} rounds, {} calls ({calls} with the warm-up) each answered exactly once: {} ok, -32001 {:?}, {} other errors, {} link drops, {} instance changes; p50 {:.2} ms, p99 {:.2} ms",
            self.rounds.len(),
            s.calls,
            s.ok,
            s.lost,
            s.other_errors,
            s.link_drops,
            s.instance_changes,
            s.p50_ms,
            s.p99_ms
        );
        if s.ok == s.calls && s.link_drops == 0 && s.instance_changes == 0 {
            Judgement::new(RowOutcome::Survived, figures)
        } else {
            Judgement::new(RowOutcome::Surfaced, figures)
        }
    }
}

/// The daemon, the fault proxy in front of it, and the state dir both share with the agent.
struct Rig {
    /// Owns the fault proxy (which carries no toxic in a soak).
    nemesis: Nemesis,
    /// The daemon the harness owns (replaced on its port by [`Between::KillDaemon`]).
    daemon: OwnedDaemon,
    /// What `reticle mcp` takes for the daemon's port.
    proxy: LinkProxy,
    /// The daemons' and the proxy's private state dir (their logs are read from it).
    state: tempfile::TempDir,
}

impl Rig {
    async fn start() -> Result<Self, String> {
        let state = tempfile::tempdir().map_err(|e| format!("no private state dir: {e}"))?;
        let nemesis = Nemesis::from_env().await?;
        let daemon = daemon_on(None, state.path()).await?;
        let proxy = nemesis.proxy(daemon.port()).await?;
        Ok(Self {
            nemesis,
            daemon,
            proxy,
            state,
        })
    }

    /// SIGKILLs the daemon, starts a new one on its port, and waits until the proxy has a session
    /// with it. Records the fault, established when all of that happened.
    async fn kill_daemon(&mut self, history: &History, options: &harness::ProxyOptions) {
        let old = self.daemon.instance().to_string();
        self.daemon.signal(nix::sys::signal::Signal::SIGKILL);
        let dead = harness::poll::within(BOUND, async || self.daemon.has_exited().then_some(()))
            .await
            .is_some();
        let replaced = match daemon_on(Some(self.daemon.port()), self.state.path()).await {
            Ok(daemon) if dead => {
                self.daemon = daemon;
                Ok(self.daemon.instance().to_string())
            }
            Ok(_) => Err("the old daemon never exited".to_string()),
            Err(why) => Err(why),
        };
        let joined = match &replaced {
            Ok(new) => harness::poll::within(BOUND, async || {
                events(options, proxy_events::DAEMON_SESSION)
                    .iter()
                    .any(|e| e["daemonInstance"] == new.as_str())
                    .then_some(())
            })
            .await
            .is_some(),
            Err(_) => false,
        };
        history.fault(
            fault::KILL_DAEMON,
            joined,
            json!({ "killed": old, "replacement": replaced, "proxyJoinedIt": joined }),
        );
    }
}

/// A daemon the harness owns, with the soak's idle-shutdown bound, on `port` (or a free one).
/// The bound must be in force, as the daemon's own start line says, or the soak proves nothing
/// about it.
async fn daemon_on(port: Option<u16>, state: &std::path::Path) -> Result<OwnedDaemon, String> {
    let mut builder = OwnedDaemon::builder().state_dir(state).env(
        reticle::config::env::IDLE_SHUTDOWN_MS,
        IDLE_SHUTDOWN.as_millis().to_string(),
    );
    if let Some(port) = port {
        builder = builder.port(port);
    }
    let daemon = builder.try_start().await?;
    let log = std::fs::read_to_string(daemon.log_path()).unwrap_or_default();
    match idle_bound_in(&log, daemon.instance()) {
        Some(ms) if ms == IDLE_SHUTDOWN.as_millis() as u64 => Ok(daemon),
        other => Err(format!(
            "the daemon did not start with the soak's idle-shutdown bound of {} ms (its start line says {other:?})",
            IDLE_SHUTDOWN.as_millis()
        )),
    }
}

/// The idle-shutdown bound the daemon `instance` logged at start, from its log's text.
fn idle_bound_in(log: &str, instance: &str) -> Option<u64> {
    log.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|e| e["event"] == reticle::daemon::events::START && e["instance"] == instance)
        .find_map(|e| e["idleShutdownMs"].as_u64())
}

/// The deliberate idle gap between rounds: a workload parameter (the soak measures the link
/// across it), never a wait for something to happen.
async fn idle_gap(gap: Duration) {
    tokio::time::sleep(gap).await;
}

/// The `n`-th call of a round: its method and params.
fn nth_call(n: usize) -> (&'static str, Value) {
    match n % 3 {
        0 => (
            "tools/call",
            json!({ "name": "reticle_sessions", "arguments": {} }),
        ),
        1 => ("tools/list", json!({})),
        _ => ("ping", json!({})),
    }
}

/// Runs a soak with `plan`, calling `progress` with each round's record as it ends.
pub async fn run(env: &GateEnv, plan: Plan, mut progress: impl FnMut(&RoundRecord)) -> Soak {
    let history = History::new();
    let unestablished = |history: History, why: String| Soak {
        plan,
        rounds: Vec::new(),
        summary: Summary::default(),
        history,
        setup_failed: Some(why),
    };
    let mut rig = match Rig::start().await {
        Ok(rig) => rig,
        Err(why) => return unestablished(history, why),
    };
    let options = proxy_options(env, rig.proxy.port(), rig.state.path());
    observe(
        &history,
        "soak",
        json!({ "rounds": plan.rounds, "calls": plan.calls, "idleMs": plan.idle.as_millis() as u64,
                "straddles": plan.straddled(), "nemesis": rig.nemesis.describe(),
                "daemon": rig.daemon.instance() }),
    );
    let mut raw = RawAgent::start(&history, options.clone());
    let warm = match raw.initialize(BOUND).await {
        Some(_) => raw.call("tools/call", nth_call(0).1, BOUND).await,
        None => None,
    };
    if warm.is_none_or(|a| a.get("result").is_none()) {
        raw.close_stdin();
        raw.wait_exit(BOUND).await;
        rig.proxy.close().await;
        return unestablished(
            history,
            "the link never served a call before the first round".into(),
        );
    }
    let started = Instant::now();
    let mut marks = Vec::new();
    let mut drops_seen = 0;
    for round in 0..plan.rounds {
        if round > 0 {
            if plan.between == Between::KillDaemon {
                rig.kill_daemon(&history, &options).await;
            }
            idle_gap(plan.idle).await;
        }
        let from = history.ops().len();
        for n in 0..plan.calls {
            let (method, params) = nth_call(n);
            raw.call(method, params, CALL_BOUND).await;
        }
        let drops = drops_logged(&options);
        marks.push(Mark {
            from,
            to: history.ops().len(),
            drops: drops - drops_seen,
        });
        drops_seen = drops;
        progress(&records(&history.ops(), &marks).remove(round));
    }
    let wall = started.elapsed();
    raw.close_stdin();
    raw.wait_exit(BOUND).await;
    // Answers that came after their bound, and any second answer, are recorded now.
    raw.settle();
    // The proxy logs a drop after answering the calls it cost, so a drop at the end of a round
    // can be logged after the round's count was read: it counts in the next round, and once the
    // proxy has exited, whatever is left counts in the last.
    if let Some(last) = marks.last_mut() {
        last.drops += drops_logged(&options) - drops_seen;
    }
    rig.proxy.close().await;
    let ops = history.ops();
    let rounds = records(&ops, &marks);
    let summary = summarise(&ops, &rounds, &marks, wall);
    Soak {
        plan,
        rounds,
        summary,
        history,
        setup_failed: None,
    }
}

/// Where a round's ops are in the history, and the link drops logged by its end.
struct Mark {
    /// The history's length when the round began.
    from: usize,
    /// The history's length when it ended.
    to: usize,
    /// Link drops logged since the previous round's end.
    drops: usize,
}

fn drops_logged(options: &harness::ProxyOptions) -> usize {
    events(options, proxy_events::CONNECTION_LOST)
        .iter()
        .filter(|e| e["stage"] == "lost")
        .count()
}

/// The client invokes recorded between `from` and `to`.
fn invokes(ops: &[Op], from: usize, to: usize) -> impl Iterator<Item = &Op> {
    ops[from..to]
        .iter()
        .filter(|o| o.op_type == OpType::Invoke && judge::call_id(o).is_some())
}

/// The instance that served a `reticle_sessions` answer.
fn served_by(answer: &Op) -> Option<&str> {
    answer.value["result"]["structuredContent"]["daemon"]["instance"].as_str()
}

/// Every round's record, judged over the whole history (an answer recorded after its round, by
/// the final settle, still counts for its call).
fn records(ops: &[Op], marks: &[Mark]) -> Vec<RoundRecord> {
    // The warm-up's instance is where the soak starts.
    let mut last = ops
        .iter()
        .find_map(|o| (o.op_type == OpType::Ok).then(|| served_by(o)).flatten())
        .map(str::to_string);
    let mut out = Vec::new();
    for (round, mark) in marks.iter().enumerate() {
        let mut record = RoundRecord {
            round,
            link_drops: mark.drops,
            ..RoundRecord::default()
        };
        for invoke in invokes(ops, mark.from, mark.to) {
            record.calls += 1;
            let Some(answer) = judge::answers_to(ops, invoke).into_iter().next() else {
                record.unanswered += 1;
                continue;
            };
            if harness::mcp_client::refusal_of(&answer.value["result"]).is_some() {
                record.refused += 1;
            } else if answer.op_type == OpType::Ok {
                record.ok += 1;
            } else if answer.value["code"] == reticle::mcp::jsonrpc::TRANSPORT_LOST {
                let population = answer.value["population"].as_str().unwrap_or("unnamed");
                *record.lost.entry(population.to_string()).or_default() += 1;
            } else {
                record.other_errors += 1;
            }
            if let Some(instance) = served_by(answer) {
                if !record.instances.iter().any(|i| i == instance) {
                    record.instances.push(instance.to_string());
                }
                if last.as_deref().is_some_and(|l| l != instance) {
                    record.instance_changes += 1;
                }
                last = Some(instance.to_string());
            }
        }
        out.push(record);
    }
    out
}

/// The soak's figures from its rounds and the latencies in its history.
fn summarise(ops: &[Op], rounds: &[RoundRecord], marks: &[Mark], wall: Duration) -> Summary {
    let mut s = Summary::default();
    let mut instances: Vec<&str> = Vec::new();
    for r in rounds {
        s.calls += r.calls;
        s.answered += r.answered();
        s.ok += r.ok;
        for (population, n) in &r.lost {
            *s.lost.entry(population.clone()).or_default() += n;
        }
        s.other_errors += r.other_errors;
        s.unanswered += r.unanswered;
        s.link_drops += r.link_drops;
        s.instance_changes += r.instance_changes;
        for i in &r.instances {
            if !instances.contains(&i.as_str()) {
                instances.push(i);
            }
        }
    }
    s.instances = instances.len();
    if s.calls > 0 {
        s.answer_rate = s.answered as f64 / s.calls as f64;
        s.ok_rate = s.ok as f64 / s.calls as f64;
    }
    let mut latencies: Vec<f64> = marks
        .iter()
        .flat_map(|m| invokes(ops, m.from, m.to))
        .filter_map(|invoke| {
            let answer = judge::answers_to(ops, invoke).into_iter().next()?;
            Some(answer.at_ms - invoke.at_ms)
        })
        .collect();
    latencies.sort_by(f64::total_cmp);
    s.p50_ms = percentile(&latencies, 50.0);
    s.p99_ms = percentile(&latencies, 99.0);
    s.wall_s = wall.as_secs_f64();
    s
}

/// Nearest-rank percentile of sorted samples; 0 for none.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A history of one warm-up call and then rounds of calls, each `(answer, instance)`.
    fn soaked(rounds: &[&[(Option<OpType>, &str)]]) -> (History, Vec<Mark>) {
        let h = History::new();
        let mut id = 0;
        let mut call = |h: &History, answer: Option<OpType>, instance: &str| {
            id += 1;
            h.invoke("tools/call", json!({ "id": id }));
            match answer {
                Some(OpType::Ok) => h.complete(
                    OpType::Ok,
                    "tools/call",
                    json!({ "id": id, "result": { "structuredContent": { "daemon": { "instance": instance } } } }),
                ),
                Some(op) => h.complete(
                    op,
                    "tools/call",
                    json!({ "id": id, "code": -32001, "population": "in_flight_lost" }),
                ),
                None => h.complete(
                    OpType::Info,
                    "tools/call",
                    json!({ "id": id, "message": "no answer within 20000 ms" }),
                ),
            };
        };
        call(&h, Some(OpType::Ok), "a");
        let mut marks = Vec::new();
        for round in rounds {
            let from = h.ops().len();
            for (answer, instance) in *round {
                call(&h, *answer, instance);
            }
            marks.push(Mark {
                from,
                to: h.ops().len(),
                drops: 0,
            });
        }
        (h, marks)
    }

    #[test]
    fn rounds_count_answers_losses_hangs_and_a_change_of_daemon() {
        let ok = Some(OpType::Ok);
        let (history, marks) = soaked(&[
            &[(ok, "a"), (ok, "a")],
            &[(Some(OpType::Info), ""), (ok, "b"), (None, "")],
        ]);
        let ops = history.ops();
        let rounds = records(&ops, &marks);
        assert_eq!(rounds[0].ok, 2);
        assert_eq!(rounds[0].instance_changes, 0, "the warm-up's daemon served");
        assert_eq!(rounds[1].calls, 3);
        assert_eq!(rounds[1].ok, 1);
        assert_eq!(rounds[1].lost.get("in_flight_lost"), Some(&1));
        assert_eq!(rounds[1].unanswered, 1);
        assert_eq!(rounds[1].answered(), 2);
        assert_eq!(rounds[1].instances, ["b"]);
        assert_eq!(rounds[1].instance_changes, 1);
        let summary = summarise(&ops, &rounds, &marks, Duration::from_secs(1));
        assert_eq!((summary.calls, summary.answered, summary.ok), (5, 4, 3));
        assert_eq!(summary.instances, 2);
        assert!((summary.answer_rate - 0.8).abs() < 1e-9);
    }

    #[test]
    fn a_clean_soak_survives_and_a_hang_or_a_drop_does_not() {
        let ok = Some(OpType::Ok);
        let soak = |rounds: &[&[(Option<OpType>, &str)]], drops: usize| {
            let (history, mut marks) = soaked(rounds);
            marks[0].drops = drops;
            let ops = history.ops();
            let rounds = records(&ops, &marks);
            Soak {
                plan: Plan {
                    rounds: rounds.len(),
                    calls: 2,
                    idle: Duration::ZERO,
                    between: Between::Nothing,
                },
                summary: summarise(&ops, &rounds, &marks, Duration::ZERO),
                rounds,
                history,
                setup_failed: None,
            }
        };
        let clean = soak(&[&[(ok, "a"), (ok, "a")]], 0);
        assert_eq!(clean.judgement().outcome, RowOutcome::Survived);
        let dropped = soak(&[&[(ok, "a"), (ok, "a")]], 1);
        assert_eq!(dropped.judgement().outcome, RowOutcome::Surfaced);
        let hung = soak(&[&[(ok, "a"), (None, "")]], 0);
        assert_eq!(hung.judgement().outcome, RowOutcome::Silent);
        let mut unset = soak(&[&[(ok, "a")]], 0);
        unset.setup_failed = Some("no daemon".into());
        assert_eq!(unset.judgement().outcome, RowOutcome::Inconclusive);
    }

    #[test]
    fn a_gap_straddles_only_the_bounds_it_outlasts() {
        let plan = |ms| Plan {
            rounds: 1,
            calls: 1,
            idle: Duration::from_millis(ms),
            between: Between::Nothing,
        };
        assert!(plan(500).straddled().is_empty());
        let names: Vec<&str> = plan(2500).straddled().iter().map(|h| h.name).collect();
        assert_eq!(names, ["sse_keepalive", "idle_shutdown"]);
        assert_eq!(plan(6000).straddled(), hazards());
    }

    #[test]
    fn the_idle_bound_is_read_from_the_instance_s_own_start_line() {
        let log = [
            json!({ "event": "daemon_start", "instance": "old", "idleShutdownMs": 2000 }),
            json!({ "event": "daemon_alive", "instance": "new" }),
            json!({ "event": "daemon_start", "instance": "new", "idleShutdownMs": 0 }),
        ]
        .map(|e| e.to_string())
        .join("\n");
        assert_eq!(idle_bound_in(&log, "old"), Some(2000));
        // Negative controls: a daemon started without the bound, and one that never logged.
        assert_eq!(idle_bound_in(&log, "new"), Some(0));
        assert_eq!(idle_bound_in(&log, "other"), None);
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let samples: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&samples, 50.0), 50.0);
        assert_eq!(percentile(&samples, 99.0), 99.0);
        assert_eq!(percentile(&[7.0], 99.0), 7.0);
        assert_eq!(percentile(&[], 50.0), 0.0);
    }
}
