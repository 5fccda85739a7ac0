//! Hop 2 scenarios (`reticle mcp` ↔ daemon, POST + SSE). For the TCP faults (H2.1 to H2.3 and
//! H2.7) a fault proxy from the [`Nemesis`] sits between `reticle mcp` and the daemon: the proxy
//! is given the fault proxy's port and takes it for the daemon's. Every toxic is confirmed by
//! reading it back from the nemesis and by the harness's own probe of `/status` through it;
//! only then is the fault `established`; H2.7's rounds count only once each toxic's effect shows
//! in the calls under it ([`toxic_effect`]). H2.4 to H2.6 fault the port and the daemon itself.
//! Every judge reads its history alone (`reticle gate analyze` judges it again): what a scenario
//! learns elsewhere (the proxy's log, the call it marks as under the fault, whether the link
//! served again, what the client received) it records there first.

use std::sync::Arc;
use std::time::{Duration, Instant};

use harness::ports::{listeners, pid_alive};
use harness::{OwnedDaemon, Stage, free_port, poll};
use serde_json::{Value, json};
use toxics::toxic::{Bandwidth, Latency, LimitData, ResetPeer, Slicer, SlowClose, Timeout};
use toxics::{Direction, ToxicSpec};

use super::agent::{Agent, CALL_BOUND, RawAgent, events};
use super::agent_kit;
use super::agent_kit::{
    answered_once_after_fault, call_under_fault, judge_surfacing, judge_survival,
    judge_survival_then, mark_call_under_fault, record_served_again, served_again, serves,
    warm_agent,
};
use super::kit::{BOUND, judged, ms_since, observe, unestablished};
use super::proxied::{PROBE, ProxiedDaemon};
use super::toxic_effect;
use super::{GateEnv, Ran, proxy_options};
use crate::fault;
use crate::history::{Actor, History, Op, OpType};
use crate::judge::{self, Judgement, RowOutcome, one_line};
use reticle::proxy::events as proxy_events;

/// H2.1: `reset_peer` downstream while a 120 s call runs at the daemon: the SSE stream is reset
/// (at its next keep-alive), and the call must be answered -32001 `in_flight_lost` at once,
/// saying the link dropped and that it may or may not have run, well inside the 60 s queue wait;
/// once the toxic goes, the next call succeeds.
pub async fn stream_reset_mid_call(env: &GateEnv) -> Ran {
    let history = History::new();
    let daemon =
        OwnedDaemon::builder().env(reticle::config::env::TEST_CATALOGUE, "+reticle_test_sleep");
    let (_state, link, options) = match ProxiedDaemon::start_for(
        env,
        &history,
        daemon,
        fault::RESET_PEER_DOWNSTREAM,
        judge_surfacing,
    )
    .await
    {
        Ok(opened) => opened,
        Err(ran) => return ran,
    };
    let options = options.env(reticle::config::env::QUEUE_WAIT_MS, "60000");
    let agent = match warm_agent(
        &history,
        options,
        fault::RESET_PEER_DOWNSTREAM,
        judge_surfacing,
    )
    .await
    {
        Ok(agent) => Arc::new(agent),
        Err(ran) => return ran,
    };
    mark_call_under_fault(&history);
    let caller = agent.clone();
    let slow = tokio::spawn(async move {
        caller
            .call_within("reticle_test_sleep", json!({ "ms": 120_000 }), BOUND)
            .await
    });
    let running = poll::within(BOUND, async || {
        let status = link.daemon.status().await?;
        (status.calls_in_flight == 1).then_some(())
    })
    .await
    .is_some();
    let injected = running
        && link
            .inject_refusing(
                &history,
                fault::RESET_PEER_DOWNSTREAM,
                ToxicSpec::new(ResetPeer { timeout: 0 }),
            )
            .await;
    if !running {
        history.fault(
            fault::RESET_PEER_DOWNSTREAM,
            false,
            json!({ "reason": "the slow call never ran at the daemon" }),
        );
    }
    let _ = slow.await;
    heal_and_serve(&link, &history, &agent, injected).await;
    if let Ok(agent) = Arc::try_unwrap(agent) {
        agent.close().await;
    }
    link.close(&history).await;
    judged(history, judge_stream_reset)
}

/// H2.1's judge, from the history alone: the marked call answered -32001 `in_flight_lost`
/// saying the link dropped and that it may or may not have run, then the link served again.
pub fn judge_stream_reset(ops: &[Op]) -> Judgement {
    let in_flight_lost =
        Surfacing::answered("in_flight_lost", &["dropped", "may or may not have run"]);
    judge_surfaced_then_recovered(ops, &in_flight_lost)
}

/// H2.2: the daemon blackholed (`timeout` 0 downstream on the fault proxy: connections are
/// accepted and nothing ever comes back). A call queued while no session can open is never
/// sent, and must be answered -32001 `never_sent` saying it did not run (at the queue bound at
/// the latest: 3 s here); once the blackhole goes, the same proxy serves the call.
pub async fn blackholed_daemon_queue(env: &GateEnv) -> Ran {
    let history = History::new();
    let (_state, link, options) = match ProxiedDaemon::start_for(
        env,
        &history,
        OwnedDaemon::builder(),
        fault::BLACKHOLE_DAEMON,
        judge_surfacing,
    )
    .await
    {
        Ok(opened) => opened,
        Err(ran) => return ran,
    };
    let options = options.env(reticle::config::env::QUEUE_WAIT_MS, "3000");
    let injected = link
        .inject_refusing(
            &history,
            fault::BLACKHOLE_DAEMON,
            ToxicSpec::new(Timeout { timeout: 0 }),
        )
        .await;
    let agent = match Agent::start(&history, options).await {
        Ok(agent) => agent,
        Err(why) => {
            observe(&history, "initialize_failed", json!({ "reason": why }));
            return judged(history, judge_surfacing);
        }
    };
    mark_call_under_fault(&history);
    let _ = agent.call("reticle_sessions", json!({})).await;
    heal_and_serve(&link, &history, &agent, injected).await;
    agent.close().await;
    link.close(&history).await;
    judged(history, judge_blackholed_queue)
}

/// H2.2's judge, from the history alone: the marked call answered -32001 `never_sent` saying it
/// did not run, then the link served again.
pub fn judge_blackholed_queue(ops: &[Op]) -> Judgement {
    let never_sent = Surfacing::answered("never_sent", &["did not run"]);
    judge_surfaced_then_recovered(ops, &never_sent)
}

/// H2.3: `reset_peer` upstream: every new connection is reset at its first byte, which leaves
/// the open SSE stream alone (it sends nothing upstream) and hits every POST. The call must be
/// answered -32001 `post_failed` saying the link is still up, the stream must never drop, and
/// once the toxic goes the very next call succeeds.
pub async fn post_leg_reset(env: &GateEnv) -> Ran {
    post_leg_reset_with(env, &[]).await
}

/// H2.3's scenario with `daemon_env` set on its (traced) daemon: the negative control of the
/// trace check under faults gives it the switch that breaks its trace.
pub async fn post_leg_reset_with(env: &GateEnv, daemon_env: &[(&str, &str)]) -> Ran {
    let history = History::new();
    let daemon = daemon_env
        .iter()
        .fold(OwnedDaemon::builder(), |builder, (key, value)| {
            builder.env(key, *value)
        });
    let (_state, link, options) = match ProxiedDaemon::start_for(
        env,
        &history,
        daemon,
        fault::RESET_PEER_UPSTREAM,
        judge_surfacing,
    )
    .await
    {
        Ok(opened) => opened,
        Err(ran) => return ran,
    };
    let agent = match warm_agent(
        &history,
        options.clone(),
        fault::RESET_PEER_UPSTREAM,
        judge_surfacing,
    )
    .await
    {
        Ok(agent) => agent,
        Err(ran) => return ran,
    };
    let outages_before = events(&options, proxy_events::CONNECTION_LOST).len();
    let injected = link
        .inject_refusing(
            &history,
            fault::RESET_PEER_UPSTREAM,
            ToxicSpec::new(ResetPeer { timeout: 0 }).upstream(),
        )
        .await;
    mark_call_under_fault(&history);
    let _ = agent.call("reticle_sessions", json!({})).await;
    link.heal(&history).await;
    let next = agent.call("reticle_sessions", json!({})).await;
    let outages = events(&options, proxy_events::CONNECTION_LOST).len() - outages_before;
    observe(&history, OUTAGES, json!({ "during": outages }));
    record_served_again(&history, injected && next.is_ok());
    agent.close().await;
    link.close(&history).await;
    judged(history, judge_post_leg_reset)
}

/// The observation of the link outages the proxy logged while the POST leg was reset:
/// `{"during"}`.
const OUTAGES: &str = "outages";

/// H2.3's judge, from the history alone: the marked call answered -32001 `post_failed` saying
/// the link is still up, belied by any outage the proxy logged meanwhile (observed), then the
/// link served again.
pub fn judge_post_leg_reset(ops: &[Op]) -> Judgement {
    let outages = agent_kit::last_observed(ops, OUTAGES)
        .and_then(|o| o.value["during"].as_u64())
        .unwrap_or(0);
    let post_failed =
        Surfacing::answered("post_failed", &["still up"]).belied_by((outages > 0).then(|| {
            format!(
                "the answer said the link was still up, but the proxy logged {outages} outage(s)"
            )
        }));
    judge_surfaced_then_recovered(ops, &post_failed)
}

/// H2.4: a squatter on the port that accepts and never serves. `initialize` must be answered
/// before any daemon exists (the squatter the port's only listener when the answer is in; its
/// time is measured by the benchmark, not judged), the first tool call must fail naming the port and the squatter's pid
/// and saying it did not run, and once the squatter leaves the proxy serves (starting a daemon).
pub async fn squatter_on_the_port(env: &GateEnv) -> Ran {
    let history = History::new();
    let Stage { state, port, _reap } = Stage::default();
    let squatter = match Squatter::start(port) {
        Ok(squatter) => squatter,
        Err(why) => return unestablished(history, fault::SQUAT_PORT, &why, judge_surfacing),
    };
    let pid = std::process::id();
    let listening = listeners(port).iter().any(|h| h.pid == pid);
    history.fault(
        fault::SQUAT_PORT,
        listening,
        json!({ "port": port, "pid": pid, "note": "the gate process itself accepts and never answers" }),
    );
    let started = Instant::now();
    let agent = tokio::time::timeout(
        BOUND,
        Agent::start(&history, proxy_options(env, port, state.path())),
    )
    .await;
    // The promise: `initialize` is answered before any daemon exists (the squatter is the only
    // listener when the answer is in). Its time is the benchmark's, never judged here.
    let holders: Vec<u32> = listeners(port).iter().map(|h| h.pid).collect();
    let daemon_existed = holders.iter().any(|holder| *holder != pid);
    observe(
        &history,
        INITIALIZE_ANSWERED,
        json!({ "ms": ms_since(started), "listeners": holders, "daemonExisted": daemon_existed }),
    );
    let Ok(Ok(agent)) = agent else {
        return judged(history, judge_surfacing);
    };
    mark_call_under_fault(&history);
    let _ = agent.call("reticle_sessions", json!({})).await;
    squatter.leave();
    let left = poll::within(BOUND, async || listeners(port).is_empty().then_some(()))
        .await
        .is_some();
    record_served_again(&history, left && serves(&agent).await);
    agent.close().await;
    judged(history, judge_squatter)
}

/// The observation of when `initialize` was answered: `{"ms", "listeners", "daemonExisted"}`.
const INITIALIZE_ANSWERED: &str = "initialize_answered";

/// H2.4's judge, from the history alone: the marked call answered -32001 `never_sent` naming the
/// squatted port and the squatter's pid (as the fault recorded them) and saying it did not run,
/// belied when `initialize` was answered only once a daemon listened (observed), then the link
/// served again.
pub fn judge_squatter(ops: &[Op]) -> Judgement {
    let squat = judge::established_fault(ops).map(|f| &f.value);
    let (port, pid) = match squat {
        Ok(value) => (value["port"].clone(), value["pid"].clone()),
        Err(_) => (Value::Null, Value::Null),
    };
    let initialize = agent_kit::last_observed(ops, INITIALIZE_ANSWERED).map(|o| &o.value);
    let daemon_existed = initialize.is_some_and(|v| v["daemonExisted"] == true);
    let holders = initialize
        .map(|v| v["listeners"].clone())
        .unwrap_or_default();
    let never_sent = Surfacing::answered(
        "never_sent",
        &[
            &format!("port {port}"),
            &format!("pid {pid}"),
            "did not run",
        ],
    )
    .belied_by(daemon_existed.then(|| {
        format!(
            "initialize was answered only once another process listened on port {port} (pids {holders}): it waited for a daemon"
        )
    }))
    .by(SQUATTER);
    judge_surfaced_then_recovered(ops, &never_sent)
}

/// H2.4's nemesis, as its evidence names it.
const SQUATTER: &str = "the gate's own listener, which accepts and never answers";

/// H2.5: the daemon restarted with another catalogue. The client must receive
/// `notifications/tools/list_changed` before anything from the new daemon, and the listing it
/// then gets is the new daemon's. Control: a restart with the same catalogue announces nothing.
pub async fn catalogue_changes_across_a_restart(env: &GateEnv) -> Ran {
    let history = History::new();
    let state = tempfile::tempdir().expect("a private state dir");
    let port = free_port();
    let daemon = |catalogue: Option<&str>| {
        let builder = OwnedDaemon::builder().port(port).state_dir(state.path());
        match catalogue {
            Some(edit) => builder.env(reticle::config::env::TEST_CATALOGUE, edit),
            None => builder,
        }
    };
    let first = daemon(None).start().await;
    let first_hash = first
        .status()
        .await
        .and_then(|s| s.catalogue)
        .map(|c| c.hash);
    let mut raw = RawAgent::start(&history, proxy_options(env, port, state.path()));
    let names = |answer: &Option<Value>| -> Vec<String> {
        answer
            .as_ref()
            .and_then(|a| a["result"]["tools"].as_array().cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(|t| t["name"].as_str().map(str::to_string))
            .collect()
    };
    let notices = |raw: &RawAgent| {
        raw.received()
            .iter()
            .filter(|v| v["method"] == "notifications/tools/list_changed")
            .count()
    };
    let before = if raw.initialize(BOUND).await.is_some() {
        names(&raw.call("tools/list", json!({}), BOUND).await)
    } else {
        Vec::new()
    };
    // Control: the same catalogue in a new daemon life.
    drop(first);
    let same = daemon(None).start().await;
    let control = names(&raw.call("tools/list", json!({}), BOUND).await);
    let control_notices = notices(&raw);
    drop(same);
    let changed = daemon(Some("+reticle_test_echo")).start().await;
    let changed_hash = changed
        .status()
        .await
        .and_then(|s| s.catalogue)
        .map(|c| c.hash);
    history.fault(
        fault::RESTART_WITH_ANOTHER_CATALOGUE,
        !before.is_empty() && first_hash.is_some() && changed_hash != first_hash,
        json!({ "before": first_hash, "after": changed_hash, "catalogueBefore": before }),
    );
    let listing = raw.send("tools/list", json!({})).await;
    let after = names(&raw.answer(&listing, BOUND).await);
    let echoed = raw
        .call(
            "tools/call",
            json!({"name": "reticle_test_echo", "arguments": {"a": 1}}),
            BOUND,
        )
        .await
        .is_some_and(|a| a.get("result").is_some());
    raw.settle();
    let received = raw.received();
    let notice_at = received
        .iter()
        .position(|v| v["method"] == "notifications/tools/list_changed");
    let listed_at = received.iter().position(|v| v.get("id") == Some(&listing));
    let count = notices(&raw);
    observe(
        &history,
        LIST_CHANGED,
        json!({ "count": count, "noticeAt": notice_at, "listingAt": listed_at, "controlNotices": control_notices,
                "controlListing": control, "listing": after, "newToolServed": echoed }),
    );
    judged(history, judge_catalogue_change)
}

/// The observation of the notices and listings the client received across the restarts:
/// `{"count", "noticeAt", "listingAt", "controlNotices", "controlListing", "listing",
/// "newToolServed"}`.
const LIST_CHANGED: &str = "list_changed";

/// H2.5's judge, from the history alone: the control (same catalogue) announced nothing and
/// listed the catalogue the fault recorded before; then exactly one `list_changed`, received
/// before the new listing, which is the old catalogue plus the new tool, and the new tool served
/// (observed).
pub fn judge_catalogue_change(ops: &[Op]) -> Judgement {
    if let Err(unproven) = answered_once_after_fault(ops) {
        return unproven;
    }
    let names = |value: &Value| -> Vec<String> {
        value
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter_map(|n| n.as_str().map(str::to_string))
            .collect()
    };
    let before = judge::established_fault(ops)
        .map(|f| names(&f.value["catalogueBefore"]))
        .unwrap_or_default();
    let seen = agent_kit::last_observed(ops, LIST_CHANGED)
        .map(|o| o.value.clone())
        .unwrap_or_default();
    let control_notices = seen["controlNotices"].as_u64().unwrap_or(0);
    let control = names(&seen["controlListing"]);
    if control_notices != 0 || control != before {
        return Judgement::new(
            RowOutcome::Inconclusive,
            format!(
                "the control (same catalogue) got {control_notices} notice(s) and {control:?}: the check proves nothing"
            ),
        );
    }
    let count = seen["count"].as_u64().unwrap_or(0);
    let after = names(&seen["listing"]);
    let echoed = seen["newToolServed"] == true;
    let first = matches!(
        (seen["noticeAt"].as_u64(), seen["listingAt"].as_u64()),
        (Some(n), Some(l)) if n < l
    );
    let mut edited = before;
    edited.push("reticle_test_echo".to_string());
    if count == 1 && first && after == edited && echoed {
        Judgement::new(
            RowOutcome::Surfaced,
            "list_changed arrived before the new daemon's catalogue, which is served; the control (same catalogue) announced nothing",
        )
    } else {
        Judgement::new(
            RowOutcome::Silent,
            format!(
                "{count} list_changed (first: {first}) for a changed catalogue; listing {after:?}; new tool served: {echoed}"
            ),
        )
    }
}

/// H2.6: the daemon SIGKILLed and replaced (the proxy starts a new one); the next call must reach
/// an initialized session: the handshake was replayed, and the daemon logged no refusal.
pub async fn handshake_replayed_after_restart(env: &GateEnv) -> Ran {
    let history = History::new();
    let Stage { state, port, _reap } = Stage::default();
    let options = proxy_options(env, port, state.path());
    let agent = match warm_agent(
        &history,
        options.clone(),
        fault::SIGKILL_DAEMON,
        judge_survival,
    )
    .await
    {
        Ok(agent) => agent,
        Err(ran) => return ran,
    };
    let before = reticle::probe::fetch_status(port, PROBE).await;
    let killed = match &before {
        Some(status) => {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(status.pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
            poll::within(BOUND, async || (!pid_alive(status.pid)).then_some(()))
                .await
                .is_some()
        }
        None => false,
    };
    history.fault(
        fault::SIGKILL_DAEMON,
        killed,
        json!({ "pid": before.as_ref().map(|s| s.pid), "instance": before.as_ref().map(|s| s.instance.clone()) }),
    );
    // "Then call": once the proxy has seen the daemon go.
    let seen = poll::within(BOUND, async || {
        events(&options, proxy_events::CONNECTION_LOST)
            .into_iter()
            .next()
    })
    .await
    .is_some();
    observe(&history, "loss_seen", json!({ "seen": seen }));
    let result = agent.call("reticle_sessions", json!({})).await;
    let after = reticle::probe::fetch_status(port, PROBE).await;
    agent.close().await;
    let refused = std::fs::read_to_string(state.path().join(format!("daemon-{port}.log")))
        .unwrap_or_default()
        .contains("mcp_call_refused");
    let served_by = result
        .as_ref()
        .ok()
        .map(|r| r["structuredContent"]["daemon"]["instance"].clone());
    observe(
        &history,
        AFTER_RESTART,
        json!({ "servedBy": served_by, "instanceNow": after.map(|s| s.instance), "callRefusedLogged": refused }),
    );
    judged(history, judge_handshake_replayed)
}

/// The observation of the daemon after the restart: the instance that served the call, the
/// instance `/status` then named, and whether the daemon's log holds `mcp_call_refused`:
/// `{"servedBy", "instanceNow", "callRefusedLogged"}`.
const AFTER_RESTART: &str = "after_restart";

/// H2.6's judge, from the history alone: every call after the SIGKILL survived, no refusal in
/// the daemon's log (observed), and the call served by the new instance, not the killed one
/// (as the fault recorded it).
pub fn judge_handshake_replayed(ops: &[Op]) -> Judgement {
    judge_survival_then(ops, |_| {
        let seen = agent_kit::last_observed(ops, AFTER_RESTART)
            .map(|o| o.value.clone())
            .unwrap_or_default();
        if seen["callRefusedLogged"] == true {
            return Judgement::new(
                RowOutcome::Silent,
                "a call reached an uninitialized session (the daemon logged mcp_call_refused)",
            );
        }
        let old_instance = judge::established_fault(ops)
            .map(|f| f.value["instance"].clone())
            .unwrap_or_default();
        let (served_by, new_instance) = (&seen["servedBy"], &seen["instanceNow"]);
        if new_instance.is_null() || *new_instance == old_instance || served_by != new_instance {
            return Judgement::new(
                RowOutcome::Inconclusive,
                format!(
                    "the call was not shown to reach a new daemon: served by {served_by}, now {new_instance}"
                ),
            );
        }
        Judgement::new(
            RowOutcome::Survived,
            "the call after SIGKILL and restart reached the new daemon's initialized session; no refusal logged",
        )
    })
}

/// What a toxic does to the calls under it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// It slows or reshapes the bytes: every call under it must succeed.
    Degrades,
    /// It cuts or stops the link: every call must still be answered exactly once, by its result
    /// or by a -32001 naming the loss.
    Cuts,
}

impl Effect {
    fn word(self) -> &'static str {
        match self {
            Effect::Degrades => "degrades",
            Effect::Cuts => "cuts",
        }
    }
}

/// One toxic on the link for a round of calls.
#[derive(Debug, Clone)]
pub struct Round {
    pub spec: ToxicSpec,
    pub effect: Effect,
    /// Calls made while it is installed.
    pub calls: usize,
}

impl Round {
    fn new(spec: ToxicSpec, effect: Effect, calls: usize) -> Self {
        Self {
            spec,
            effect,
            calls,
        }
    }
}

/// The limits of H2.7 on each direction: latency with jitter, bandwidth, slicer, slow_close and
/// limit_data. `limit_data` is sized to bite: downstream it ends each stream after its handshake
/// and an answer or two (a `/status` answer, under 400 bytes, still fits), upstream it cuts every
/// POST mid-request (a `GET`, under 100 bytes, still fits).
pub fn limits() -> Vec<Round> {
    let mut rounds = Vec::new();
    for direction in Direction::ALL {
        let on = |spec: ToxicSpec| spec.stream(direction);
        rounds.push(Round::new(
            on(ToxicSpec::new(Latency {
                latency: 60,
                jitter: 40,
            })),
            Effect::Degrades,
            4,
        ));
        rounds.push(Round::new(
            on(ToxicSpec::new(Bandwidth { rate: 8 })),
            Effect::Degrades,
            4,
        ));
        rounds.push(Round::new(
            on(ToxicSpec::new(Slicer {
                average_size: 8,
                size_variation: 4,
                delay: 200,
            })),
            Effect::Degrades,
            4,
        ));
        rounds.push(Round::new(
            on(ToxicSpec::new(SlowClose { delay: 300 })),
            Effect::Degrades,
            4,
        ));
        let bytes = match direction {
            Direction::Downstream => 1000,
            Direction::Upstream => 128,
        };
        rounds.push(Round::new(
            on(ToxicSpec::new(LimitData { bytes })),
            Effect::Cuts,
            6,
        ));
    }
    rounds
}

/// Every toxic on each direction: the [`limits`] plus the two that stop the link outright,
/// `timeout` 0 (a blackhole; one call, since a POST into it waits out its 10 s bound) and
/// `reset_peer`.
pub fn every_toxic() -> Vec<Round> {
    let mut rounds = limits();
    for direction in Direction::ALL {
        rounds.push(Round::new(
            ToxicSpec::new(Timeout { timeout: 0 }).stream(direction),
            Effect::Cuts,
            1,
        ));
        rounds.push(Round::new(
            ToxicSpec::new(ResetPeer { timeout: 0 }).stream(direction),
            Effect::Cuts,
            2,
        ));
    }
    rounds
}

/// H2.7: each of latency (with jitter), bandwidth, slicer, slow_close and limit_data on each
/// direction of the link, a few calls under each, then healed and a call after. Every call must
/// be answered exactly once (counted on the raw stream); under the degrading toxics every call
/// must succeed; under limit_data a call may lose its answer but must then be answered -32001;
/// after each heal the link must serve again.
pub async fn limits_on_the_link(env: &GateEnv) -> Ran {
    rounds_on_the_link(env, &limits(), CALL_BOUND).await
}

/// Runs `rounds` on the MCP link, each call waited for at most `patience`. The negative control
/// runs this with a stand-in and a short patience.
pub async fn rounds_on_the_link(env: &GateEnv, rounds: &[Round], patience: Duration) -> Ran {
    let history = History::new();
    let (_state, link, options) = match ProxiedDaemon::start_for(
        env,
        &history,
        OwnedDaemon::builder(),
        fault::TOXIC,
        judge_rounds,
    )
    .await
    {
        Ok(opened) => opened,
        Err(ran) => return ran,
    };
    let options = options.env(reticle::config::env::QUEUE_WAIT_MS, "5000");
    let mut raw = RawAgent::start(&history, options);
    let call = async |raw: &mut RawAgent, n: usize| -> Option<Value> {
        if n.is_multiple_of(2) {
            raw.call_sessions(patience).await
        } else {
            raw.call("tools/list", json!({}), patience).await
        }
    };
    let served =
        |answer: &Option<Value>| answer.as_ref().is_some_and(|a| a.get("result").is_some());
    // Warm-up: the link serves a listing and a call before any toxic (each attempt recorded; a
    // hang ends it).
    let ready = raw.initialize(patience).await.is_some()
        && served(&call(&mut raw, 1).await)
        && raw.call_until_served(patience).await;
    if ready {
        'rounds: for round in rounds {
            let name = round.spec.resolved_name();
            let installed = link.proxy.inject(&round.spec).await;
            history.fault(
                fault::TOXIC,
                installed.is_ok(),
                json!({ "toxic": name, "spec": round.spec, "effect": round.effect.word(),
                        "nemesis": link.nemesis.describe(), "error": installed.as_ref().err() }),
            );
            if installed.is_err() {
                break;
            }
            for n in 0..round.calls {
                if call(&mut raw, n).await.is_none() {
                    break 'rounds;
                }
            }
            if !link.heal(&history).await {
                break;
            }
            if !raw.call_until_served(patience).await {
                break;
            }
        }
    }
    raw.close_stdin();
    raw.wait_exit(BOUND).await;
    raw.settle();
    link.close(&history).await;
    judged(history, judge_rounds)
}

/// Judges a history of rounds ([`judge_each_round`]), naming the nemesis the first toxic
/// recorded, so the evidence read offline is the live run's.
pub fn judge_rounds(ops: &[Op]) -> Judgement {
    let verdict = judge_each_round(ops);
    let nemesis = ops
        .iter()
        .find(|o| o.actor == Actor::Nemesis && o.f == fault::TOXIC)
        .and_then(|o| o.value["nemesis"].as_str());
    match nemesis {
        Some(nemesis) => Judgement::new(
            verdict.outcome,
            format!("{} (nemesis: {nemesis})", verdict.evidence),
        ),
        None => verdict,
    }
}

/// Judges a history of rounds: exactly once first, then each round by its toxic's effect, then
/// the link serving again after each heal.
fn judge_each_round(ops: &[Op]) -> Judgement {
    let calls = match judge::exactly_once(ops) {
        Ok(calls) => calls,
        Err(hang) => return hang,
    };
    let faults: Vec<&Op> = ops
        .iter()
        .filter(|o| o.actor == Actor::Nemesis && o.f == fault::TOXIC)
        .collect();
    if faults.is_empty() {
        return Judgement::new(RowOutcome::Inconclusive, "no toxic was installed");
    }
    let cuts = cuts_per_toxic(ops);
    let mut effects = Vec::new();
    for (i, fault) in faults.iter().enumerate() {
        let name = fault.value["toxic"].as_str().unwrap_or("?");
        if fault.op_type != OpType::Ok {
            return Judgement::new(
                RowOutcome::Inconclusive,
                format!(
                    "toxic {name} could not be established: {}",
                    judge::text(&fault.value)
                ),
            );
        }
        let end = faults.get(i + 1).map(|f| f.index).unwrap_or(usize::MAX);
        let heal = ops.iter().find(|o| {
            o.index > fault.index
                && o.index < end
                && o.actor == Actor::Nemesis
                && o.f == fault::HEAL
        });
        let Some(heal) = heal.filter(|h| h.op_type == OpType::Ok) else {
            return Judgement::new(
                RowOutcome::Inconclusive,
                format!("toxic {name} was never confirmed removed"),
            );
        };
        let invokes = |from: usize, to: usize| {
            ops.iter().filter(move |o| {
                o.index > from
                    && o.index < to
                    && o.actor == Actor::Client
                    && o.op_type == OpType::Invoke
            })
        };
        let mut under = Vec::new();
        for invoke in invokes(fault.index, heal.index) {
            let answer = judge::answers_to(ops, invoke);
            let Some(&answer) = answer.first() else {
                continue;
            };
            under.push(toxic_effect::Under { invoke, answer });
            let id = judge::call_id(invoke).cloned().unwrap_or_default();
            // Every answer here is a result (`ok`) or an error, definite (`fail`) or not
            // (`info`: a -32001 whose call may have run).
            match (fault.value["effect"].as_str(), answer.op_type) {
                (_, OpType::Ok) => {}
                (Some("cuts"), _)
                    if answer.value["code"] == reticle::mcp::jsonrpc::TRANSPORT_LOST => {}
                (Some("cuts"), _) => {
                    return Judgement::new(
                        RowOutcome::Silent,
                        format!(
                            "under {name}, `{}` {id} failed without naming the link: {}",
                            invoke.f,
                            one_line(&judge::text(&answer.value))
                        ),
                    );
                }
                _ => {
                    return Judgement::new(
                        RowOutcome::Surfaced,
                        format!(
                            "under {name}, `{}` {id} failed: {}",
                            invoke.f,
                            one_line(&judge::text(&answer.value))
                        ),
                    );
                }
            }
        }
        match toxic_effect::shown(fault, &under) {
            Ok(seen) => effects.push(seen),
            Err(why) => {
                return Judgement::new(
                    RowOutcome::Inconclusive,
                    format!(
                        "toxic {name} left no effect in the history, so its round proves nothing: {why}"
                    ),
                );
            }
        }
        let back = invokes(heal.index, end).any(|invoke| {
            judge::answers_to(ops, invoke)
                .first()
                .is_some_and(|a| a.op_type == OpType::Ok)
        });
        if !back {
            return Judgement::new(
                RowOutcome::Silent,
                format!("the link never served again after {name} was removed"),
            );
        }
    }
    let cut: Vec<String> = cuts
        .iter()
        .map(|(name, lost, of)| format!("{name} {lost}/{of}"))
        .collect();
    Judgement::new(
        RowOutcome::Survived,
        format!(
            "{} toxics, {calls} calls, each answered exactly once; every call under a degrading toxic succeeded; answered -32001 under a cutting one: {}; the link served after every heal; every toxic's effect seen ({})",
            faults.len(),
            cut.join(", "),
            effects.join("; ")
        ),
    )
}

/// For each cutting toxic in a history of rounds: its name, how many of the calls under it were
/// answered -32001, and how many calls were made under it.
pub fn cuts_per_toxic(ops: &[Op]) -> Vec<(String, usize, usize)> {
    let faults: Vec<&Op> = ops
        .iter()
        .filter(|o| o.actor == Actor::Nemesis && o.f == fault::TOXIC)
        .collect();
    let mut cuts = Vec::new();
    for (i, fault) in faults.iter().enumerate() {
        if fault.value["effect"] != "cuts" {
            continue;
        }
        let end = faults.get(i + 1).map(|f| f.index).unwrap_or(usize::MAX);
        let heal = ops
            .iter()
            .find(|o| {
                o.index > fault.index
                    && o.index < end
                    && o.actor == Actor::Nemesis
                    && o.f == fault::HEAL
            })
            .map(|h| h.index)
            .unwrap_or(end);
        let under: Vec<&Op> = ops
            .iter()
            .filter(|o| {
                o.index > fault.index
                    && o.index < heal
                    && o.actor == Actor::Client
                    && o.op_type == OpType::Invoke
            })
            .collect();
        let lost = under
            .iter()
            .filter(|invoke| {
                judge::answers_to(ops, invoke).first().is_some_and(|a| {
                    a.op_type != OpType::Ok
                        && a.value["code"] == reticle::mcp::jsonrpc::TRANSPORT_LOST
                })
            })
            .count();
        let name = fault.value["toxic"].as_str().unwrap_or("?").to_string();
        cuts.push((name, lost, under.len()));
    }
    cuts
}

/// How the marked call of a hop 1 or 2 row must be answered, and what else can belie it.
struct Surfacing {
    /// The -32001 population it must be answered as.
    population: &'static str,
    /// What its failing answer must name.
    names: Vec<String>,
    /// What the harness saw that belies a surfaced answer, if anything: the row is then silent.
    belied: Option<String>,
    /// The nemesis the evidence names, when it is not the fault proxy the fault recorded.
    nemesis: Option<&'static str>,
}

impl Surfacing {
    /// A failing answer as the -32001 `population`, naming every one of `names`.
    fn answered(population: &'static str, names: &[&str]) -> Self {
        Self {
            population,
            names: names.iter().map(|n| n.to_string()).collect(),
            belied: None,
            nemesis: None,
        }
    }

    /// The same, belied by what `belied` says when the harness saw it.
    fn belied_by(self, belied: Option<String>) -> Self {
        Self { belied, ..self }
    }

    /// The same, its fault made by `nemesis` rather than a fault proxy.
    fn by(self, nemesis: &'static str) -> Self {
        Self {
            nemesis: Some(nemesis),
            ..self
        }
    }

    /// `verdict`, unless it is surfaced and the harness saw it belied: then silent.
    fn belie(&self, verdict: Judgement) -> Judgement {
        match &self.belied {
            Some(why) if verdict.outcome == RowOutcome::Surfaced => {
                Judgement::new(RowOutcome::Silent, why.clone())
            }
            _ => verdict,
        }
    }
}

/// Heals the link and records whether it then serves `agent` again (asked only when the fault
/// was established), as [`agent_kit::SERVED_AGAIN`].
async fn heal_and_serve(link: &ProxiedDaemon, history: &History, agent: &Agent, injected: bool) {
    link.heal(history).await;
    record_served_again(history, injected && serves(agent).await);
}

/// The call marked as under the fault ([`agent_kit::CALL_UNDER_FAULT`]) must be answered as
/// `surfacing` says; then the link must have served again ([`agent_kit::SERVED_AGAIN`]). With no call
/// marked, or none made there, the row could not get as far as its call ([`judge_surfacing`]).
/// A surfaced verdict that the harness saw belied is silent. The evidence names the nemesis
/// (the fault proxy the fault recorded, unless `surfacing` names another).
fn judge_surfaced_then_recovered(ops: &[Op], surfacing: &Surfacing) -> Judgement {
    let Some(marked) = call_under_fault(ops, "tools/call") else {
        return judge_surfacing(ops);
    };
    if let Err(unproven) = answered_once_after_fault(ops) {
        return unproven;
    }
    let Some(call) = marked else {
        return surfacing.belie(judge_surfacing(ops));
    };
    let names: Vec<&str> = surfacing.names.iter().map(String::as_str).collect();
    let verdict = judge::answer_names(ops, call, &names);
    if verdict.outcome != RowOutcome::Surfaced {
        return verdict;
    }
    let population = surfacing.population;
    let answered = judge::answers_to(ops, call);
    let said = answered
        .first()
        .map(|a| a.value["population"].clone())
        .unwrap_or_default();
    if said != population {
        return Judgement::new(
            RowOutcome::Silent,
            format!(
                "the call was answered as {said}, not {population}: {}",
                verdict.evidence
            ),
        );
    }
    if !served_again(ops) {
        return Judgement::new(
            RowOutcome::Silent,
            "the link never served again once the fault went",
        );
    }
    let nemesis = match surfacing.nemesis {
        Some(named) => named,
        None => judge::established_fault(ops)
            .ok()
            .and_then(|f| f.value["nemesis"].as_str())
            .unwrap_or("?"),
    };
    surfacing.belie(Judgement::new(
        RowOutcome::Surfaced,
        format!(
            "{} [{population}]; served again after (nemesis: {nemesis})",
            verdict.evidence
        ),
    ))
}

/// A listener inside the gate process that accepts every connection and never answers.
struct Squatter {
    task: tokio::task::JoinHandle<()>,
}

impl Squatter {
    fn start(port: u16) -> Result<Self, String> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", port))
            .and_then(|l| l.set_nonblocking(true).map(|()| l))
            .and_then(tokio::net::TcpListener::from_std)
            .map_err(|e| format!("could not squat port {port}: {e}"))?;
        let task = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                held.push(socket);
            }
        });
        Ok(Self { task })
    }

    /// Closes the listener and every connection it held.
    fn leave(self) {
        self.task.abort();
    }
}

impl Drop for Squatter {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A history of rounds, built by hand: (toxic, effect, answers under it, answer after heal).
    fn rounds(spec: &[(&str, &str, &[OpType], Option<OpType>)]) -> Vec<Op> {
        let h = History::new();
        let mut id = 0;
        let mut call = |h: &History, answer: Option<OpType>, code: i64| {
            id += 1;
            h.invoke("tools/call", json!({ "id": id }));
            if let Some(answer) = answer {
                h.complete(
                    answer,
                    "tools/call",
                    json!({ "id": id, "code": code, "message": "m" }),
                );
            }
        };
        call(&h, Some(OpType::Ok), 0);
        for (toxic, effect, under, after) in spec {
            let (kind, stream) = toxic.rsplit_once('_').unwrap_or((toxic, "downstream"));
            let spec =
                super::toxic_effect::spec_json(kind, stream, json!({ "latency": 0, "jitter": 0 }));
            h.fault(
                fault::TOXIC,
                true,
                json!({ "toxic": toxic, "effect": effect, "spec": spec }),
            );
            for answer in *under {
                let code = if *answer == OpType::Ok { 0 } else { -32001 };
                call(&h, Some(*answer), code);
            }
            h.record(Actor::Nemesis, OpType::Ok, "heal", json!({}));
            call(&h, *after, 0);
        }
        h.ops()
    }

    #[test]
    fn a_degrading_toxic_must_cost_nothing_and_a_cutting_one_must_be_answered_by_name() {
        let ok = rounds(&[
            (
                "latency_upstream",
                "degrades",
                &[OpType::Ok, OpType::Ok],
                Some(OpType::Ok),
            ),
            (
                "limit_data_downstream",
                "cuts",
                &[OpType::Ok, OpType::Fail],
                Some(OpType::Ok),
            ),
        ]);
        let verdict = judge_rounds(&ok);
        assert_eq!(verdict.outcome, RowOutcome::Survived, "{verdict:?}");
        assert!(
            verdict.evidence.contains("limit_data_downstream 1/2"),
            "{verdict:?}"
        );
        assert_eq!(
            cuts_per_toxic(&ok),
            [("limit_data_downstream".to_string(), 1, 2)]
        );

        // A -32001 whose call may have run is recorded `info`: still an answer, naming the link.
        let unknown = rounds(&[(
            fault::RESET_PEER_DOWNSTREAM,
            "cuts",
            &[OpType::Info, OpType::Fail, OpType::Ok],
            Some(OpType::Ok),
        )]);
        let verdict = judge_rounds(&unknown);
        assert_eq!(verdict.outcome, RowOutcome::Survived, "{verdict:?}");
        assert_eq!(
            cuts_per_toxic(&unknown),
            [("reset_peer_downstream".to_string(), 2, 3)]
        );

        let failed = rounds(&[(
            "slicer_downstream",
            "degrades",
            &[OpType::Fail],
            Some(OpType::Ok),
        )]);
        assert_eq!(judge_rounds(&failed).outcome, RowOutcome::Surfaced);

        let hung = rounds(&[("bandwidth_upstream", "degrades", &[OpType::Ok], None)]);
        assert_eq!(judge_rounds(&hung).outcome, RowOutcome::Silent);

        let dead = rounds(&[(
            fault::RESET_PEER_UPSTREAM,
            "cuts",
            &[OpType::Fail],
            Some(OpType::Fail),
        )]);
        let verdict = judge_rounds(&dead);
        assert_eq!(verdict.outcome, RowOutcome::Silent);
        assert!(
            verdict.evidence.contains("never served again"),
            "{verdict:?}"
        );
    }

    #[test]
    fn an_uninstalled_toxic_proves_nothing_and_no_toxic_at_all_too() {
        let h = History::new();
        h.fault(
            fault::TOXIC,
            false,
            json!({ "toxic": "latency_downstream", "error": "HTTP 500" }),
        );
        assert_eq!(judge_rounds(&h.ops()).outcome, RowOutcome::Inconclusive);
        assert_eq!(
            judge_rounds(&History::new().ops()).outcome,
            RowOutcome::Inconclusive
        );
    }
}
