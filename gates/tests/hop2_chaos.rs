//! The chaos gate: compound fault sequences on the agent's link (`reticle mcp` → daemon), each
//! recorded in a history and judged by [`gates::chaos`]: every call answered exactly once, the
//! fault established (else the test fails saying the run was inconclusive, never passing
//! silently), and the link back afterwards.
//!
//! - A flapping link: the link cut (`toxics`: `reset_peer`, `timeout`, both directions) and
//!   healed again and again while the agent calls without a pause; each cut is held until the
//!   history shows a call in flight under it (the nemesis waits on the history, not the clock).
//!   Negative control: the stand-in MCP server that swallows calls, run through the same
//!   sequence, must fail exactly-once.
//! - Calls in flight across a drop: six `reticle_test_sleep` calls running at the daemon when the
//!   stream is reset; each answered once, -32001 `in_flight_lost`, saying it may have run.
//! - A cut during the handshake replay: the daemon SIGKILLed and replaced on its port while a
//!   `limit_data` toxic cuts the link in the middle of the replay into the new daemon (the
//!   stream, in the middle of the replayed `initialize`'s answer; or the replayed `initialize`'s
//!   POST itself); no call may reach the new daemon's session uninitialized.
//! - A queue flushed under continued traffic: calls queued while no stream can open (the
//!   in-test relay blackholes streams while `/status` still answers, which no TCP toxic can
//!   express), then streams open again while the agent keeps calling; every call is served with
//!   its own answer, and the daemon is sent each once, in the agent's order.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use gates::chaos::{self, seen};
use gates::fault;
use gates::history::{Actor, History, OpType};
use gates::judge::{Judgement, RowOutcome};
use gates::scenarios::agent::{CALL_BOUND, RawAgent, events};
use gates::scenarios::kit::observe;
use gates::scenarios::proxied::ProxiedDaemon;
use gates::scenarios::{GateEnv, proxy_options};
use harness::{OwnedDaemon, OwnedDaemonBuilder, ProxyOptions, poll};
use reticle::proxy::events as proxy_events;
use serde_json::{Value, json};
use support::relay::{Mode, Relay};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toxics::ToxicSpec;
use toxics::toxic::{LimitData, ResetPeer, Timeout};

/// How long the harness waits for something it caused to show.
const BOUND: Duration = Duration::from_secs(20);
/// How many times the flapping link is cut.
const FLAPS: usize = 6;
/// The continued traffic's rate while a queue is flushed: one call per this long (a workload
/// parameter: how fast the agent keeps calling, not a wait for anything).
const CALL_EVERY: Duration = Duration::from_millis(20);

fn env() -> GateEnv {
    GateEnv {
        reticle: harness::binaries::reticle(),
    }
}

/// Asserts the judgement meets `target`, naming an inconclusive run as such, with the history.
fn assert_meets(history: &History, judgement: &Judgement, wanted: &[RowOutcome]) {
    let ops: Vec<String> = history
        .ops()
        .iter()
        .map(|op| serde_json::to_string(op).unwrap_or_default())
        .collect();
    assert_ne!(
        judgement.outcome,
        RowOutcome::Inconclusive,
        "INCONCLUSIVE, the run proves nothing: {}\nhistory:\n{}",
        judgement.evidence,
        ops.join("\n")
    );
    assert!(
        wanted.contains(&judgement.outcome),
        "{}: {}\nhistory:\n{}",
        judgement.outcome.word(),
        judgement.evidence,
        ops.join("\n")
    );
}

/// A daemon the test owns behind a fault proxy, and the private state dir both it and the
/// proxy log into.
struct Rig {
    link: ProxiedDaemon,
    state: tempfile::TempDir,
}

impl Rig {
    async fn start(daemon: OwnedDaemonBuilder) -> Self {
        let state = tempfile::tempdir().unwrap();
        let link = ProxiedDaemon::start(daemon.state_dir(state.path()))
            .await
            .expect("a daemon behind a fault proxy");
        Self { link, state }
    }

    fn options(&self, env: &GateEnv) -> ProxyOptions {
        proxy_options(env, self.link.proxy.port(), self.state.path())
    }
}

/// Proxy log lines: link drops (`mcp_connection_lost`, stage `lost`).
fn drops(options: &ProxyOptions) -> usize {
    events(options, proxy_events::CONNECTION_LOST)
        .iter()
        .filter(|e| e["stage"] == "lost")
        .count()
}

/// Proxy log lines: daemon sessions opened.
fn sessions(options: &ProxyOptions) -> Vec<Value> {
    events(options, proxy_events::DAEMON_SESSION)
}

fn sessions_call() -> Value {
    json!({ "name": "reticle_sessions", "arguments": {} })
}

/// Closes the agent's stdin, waits for the proxy to exit, and records every answer on its
/// stdout not yet recorded (late ones, and any second answer).
async fn finish(raw: &mut RawAgent) {
    raw.close_stdin();
    raw.wait_exit(BOUND).await;
    raw.settle();
}

// ---- a flapping link ---------------------------------------------------------------------

/// The cuts, in turn: each stops the link outright in its own way.
fn cuts() -> Vec<Vec<ToxicSpec>> {
    vec![
        vec![ToxicSpec::new(ResetPeer { timeout: 0 })],
        vec![ToxicSpec::new(Timeout { timeout: 200 })],
        vec![
            ToxicSpec::new(ResetPeer { timeout: 0 }).upstream(),
            ToxicSpec::new(ResetPeer { timeout: 0 }),
        ],
    ]
}

/// The flapping sequence against `env`'s `reticle mcp`, each call waited for at most `patience`.
async fn flapping(env: &GateEnv, patience: Duration) -> (History, Judgement) {
    let history = History::new();
    let rig = Rig::start(OwnedDaemon::builder()).await;
    let options = rig
        .options(env)
        .env(reticle::config::env::QUEUE_WAIT_MS, "10000");
    let mut raw = RawAgent::start(&history, options.clone());
    if !raw.warm(patience).await {
        history.fault(
            fault::CUT,
            false,
            json!({ "reason": "the link never served a call before the first cut" }),
        );
        finish(&mut raw).await;
        let judgement = chaos::judge_flapping(&history.ops());
        return (history, judgement);
    }
    // The agent calls without a pause (three at a time) until the flapping is over.
    let stop = Arc::new(AtomicBool::new(false));
    let agent = {
        let stop = stop.clone();
        tokio::spawn(async move {
            'calling: while !stop.load(Ordering::SeqCst) {
                let mut ids = Vec::new();
                for _ in 0..3 {
                    ids.push(raw.send("tools/call", sessions_call()).await);
                }
                for id in &ids {
                    if raw.answer(id, patience).await.is_none() {
                        break 'calling;
                    }
                }
            }
            raw
        })
    };
    for (n, cut) in cuts().iter().cycle().take(FLAPS).enumerate() {
        let before = drops(&options);
        // Recorded before the toxic goes on: a call the agent makes from here is made under it.
        history.applying(fault::CUT, json!({ "cut": n }));
        let (established, detail) = rig.link.cut(cut).await;
        let took = history.fault(
            fault::CUT,
            established,
            json!({ "cut": n, "detail": detail }),
        );
        let dropped = poll::within(BOUND, async || (drops(&options) > before).then_some(()))
            .await
            .is_some();
        observe(&history, seen::DROP, json!({ "cut": n, "seen": dropped }));
        // The cut is held until the history shows a call in flight under it, however slowly the
        // agent's calls come on a loaded machine; only the bound running out proves nothing.
        let under = poll::within(BOUND, async || {
            let ops = history.ops();
            (!chaos::calls_under_fault(&ops, &ops[took]).is_empty()).then_some(())
        })
        .await
        .is_some();
        observe(
            &history,
            seen::CALL_UNDER,
            json!({ "cut": n, "seen": under }),
        );
        let opened = sessions(&options).len();
        rig.link.heal(&history).await;
        // Each cut cuts a live link: the next waits until the proxy has a session again.
        let back = poll::within(BOUND, async || {
            (sessions(&options).len() > opened).then_some(())
        })
        .await
        .is_some();
        observe(&history, seen::REJOINED, json!({ "cut": n, "seen": back }));
    }
    stop.store(true, Ordering::SeqCst);
    let mut raw = agent.await.expect("the agent's task");
    raw.call_until_served(patience).await;
    finish(&mut raw).await;
    rig.link.proxy.close().await;
    let judgement = chaos::judge_flapping(&history.ops());
    (history, judgement)
}

#[tokio::test]
async fn a_flapping_link_answers_every_call_exactly_once_and_comes_back() {
    let (history, judgement) = flapping(&env(), CALL_BOUND).await;
    assert_meets(
        &history,
        &judgement,
        &[RowOutcome::Surfaced, RowOutcome::Survived],
    );
    let cuts = history.ops().iter().filter(|o| o.f == fault::CUT).count();
    assert_eq!(cuts, FLAPS, "{judgement:?}");
}

/// The negative control: the stand-in MCP server that swallows `tools/call`, run through the
/// same flapping sequence, must fail the exactly-once check.
#[tokio::test]
async fn the_stand_in_that_swallows_calls_fails_the_flapping_link_check() {
    let dir = tempfile::tempdir().unwrap();
    let stand_in = gates::controls::write_stand_in_mcp(dir.path()).unwrap();
    let (history, judgement) =
        flapping(&GateEnv { reticle: stand_in }, Duration::from_secs(3)).await;
    assert_eq!(
        judgement.outcome,
        RowOutcome::Silent,
        "{judgement:?}\n{:#?}",
        history.ops()
    );
    assert!(
        judgement.evidence.contains("never answered"),
        "{judgement:?}"
    );
}

// ---- calls in flight across a drop -------------------------------------------------------

#[tokio::test]
async fn calls_in_flight_across_a_drop_are_each_answered_once_saying_they_may_have_run() {
    let history = History::new();
    let rig = Rig::start(
        OwnedDaemon::builder().env(reticle::config::env::TEST_CATALOGUE, "+reticle_test_sleep"),
    )
    .await;
    let options = rig.options(&env());
    let mut raw = RawAgent::start(&history, options.clone());
    assert!(
        raw.warm(CALL_BOUND).await,
        "INCONCLUSIVE: the link never served a call"
    );
    // Three calls that end at the daemon a few seconds after the drop (their answers then have
    // nowhere to go) and three that would run for minutes.
    let mut ids = Vec::new();
    for k in 0..6 {
        let ms = if k % 2 == 0 { 4_000 } else { 120_000 };
        ids.push(
            raw.send(
                "tools/call",
                json!({ "name": "reticle_test_sleep", "arguments": { "ms": ms } }),
            )
            .await,
        );
    }
    let running = poll::within(BOUND, async || {
        let status = rig.link.daemon.status().await?;
        (status.calls_in_flight == 6).then_some(())
    })
    .await
    .is_some();
    let before = drops(&options);
    let (cut, detail) = rig
        .link
        .cut(&[ToxicSpec::new(ResetPeer { timeout: 0 })])
        .await;
    history.fault(
        fault::DROP_IN_FLIGHT,
        running && cut,
        json!({ "ids": ids, "allSixRunning": running, "detail": detail }),
    );
    for id in &ids {
        raw.answer(id, CALL_BOUND).await;
    }
    // The proxy answers the lost calls first and logs the drop after them.
    let dropped = poll::within(BOUND, async || (drops(&options) > before).then_some(()))
        .await
        .is_some();
    observe(&history, seen::DROP, json!({ "seen": dropped }));
    rig.link.heal(&history).await;
    // The short calls end at the daemon: their answers have no stream to go to, and must never
    // reach the agent as a second answer.
    let ended = poll::within(BOUND, async || {
        let status = rig.link.daemon.status().await?;
        (status.calls_in_flight <= 3).then_some(())
    })
    .await
    .is_some();
    observe(
        &history,
        "short_calls_ended_at_the_daemon",
        json!({ "seen": ended }),
    );
    raw.call_until_served(CALL_BOUND).await;
    finish(&mut raw).await;
    rig.link.proxy.close().await;
    let judgement = chaos::judge_in_flight(&history.ops());
    assert_meets(&history, &judgement, &[RowOutcome::Surfaced]);
    assert!(
        dropped && ended,
        "the drop was logged and the short calls ended"
    );
}

// ---- a cut during the handshake replay ---------------------------------------------------

/// Bytes of the raw HTTP answer to `request` on `port`, up to the end of what `done` accepts.
async fn answer_bytes(port: u16, request: &str, done: impl Fn(&str) -> bool) -> usize {
    let mut socket = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    socket.write_all(request.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let read = tokio::time::timeout(BOUND, async {
        loop {
            match socket.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
            if done(&String::from_utf8_lossy(&seen)) {
                return;
            }
        }
    })
    .await;
    assert!(read.is_ok(), "the daemon answered {request:?}");
    seen.len()
}

/// Where a `limit_data` toxic downstream must cut so that `/status` and a stream's first two
/// events pass and the replayed `initialize`'s answer (the instructions alone are longer than
/// this margin) does not.
async fn cut_inside_the_initialize_answer(port: u16) -> u64 {
    let host = format!("Host: 127.0.0.1:{port}\r\n");
    let status = answer_bytes(
        port,
        &format!("GET /status HTTP/1.1\r\n{host}Connection: close\r\n\r\n"),
        |_| false,
    )
    .await;
    let stream = answer_bytes(
        port,
        &format!("GET /mcp/sse HTTP/1.1\r\n{host}Accept: text/event-stream\r\n\r\n"),
        |seen| {
            seen.find("reticle-session")
                .is_some_and(|at| seen[at..].contains("\n\n"))
        },
    )
    .await;
    let limit = status.max(stream) + 120;
    assert!(
        limit < stream + reticle::mcp::protocol::instructions().len(),
        "INCONCLUSIVE: /status ({status} bytes) is too long to let through while cutting inside the replayed initialize's answer (the stream's first events take {stream} bytes)"
    );
    limit as u64
}

/// The daemon SIGKILLed and replaced while `cut` is on the link: the proxy's replay into the
/// new daemon meets the cut. Then healed; a call must be served by the new daemon.
async fn restart_into(cut: ToxicSpec, cuts_the_stream: bool) -> (History, Judgement) {
    let history = History::new();
    let mut rig = Rig::start(OwnedDaemon::builder()).await;
    let options = rig.options(&env());
    let mut raw = RawAgent::start(&history, options.clone());
    assert!(
        raw.warm(CALL_BOUND).await,
        "INCONCLUSIVE: the link never served a call"
    );
    let installed = rig.link.proxy.inject(&cut).await;
    let before = drops(&options);
    rig.link.daemon.signal(nix::sys::signal::Signal::SIGKILL);
    let killed = poll::within(BOUND, async || rig.link.daemon.has_exited().then_some(()))
        .await
        .is_some();
    let lost = poll::within(BOUND, async || (drops(&options) > before).then_some(()))
        .await
        .is_some();
    let new = OwnedDaemon::builder()
        .port(rig.link.daemon.port())
        .state_dir(rig.state.path())
        .start()
        .await;
    let instance = new.instance().to_string();
    // The proxy opens a session with the new daemon, replays the handshake into it, and the cut
    // meets the replay: the stream ends (or the POST fails) before the agent's calls are served.
    let opened = |options: &ProxyOptions| {
        sessions(options)
            .iter()
            .filter(|e| e["daemonInstance"] == instance.as_str())
            .count()
    };
    // The cut is held until the replay has met it: the new session's stream ended under it, or
    // the proxy logged the replayed `initialize`'s POST as failed. A session merely opened is not
    // enough: on a loaded machine the replay's POST can leave after the heal, and meet no cut.
    let met = poll::within(BOUND, async || {
        let seen = if cuts_the_stream {
            opened(&options) >= 1 && drops(&options) > before + 1
        } else {
            opened(&options) >= 1 && !events(&options, proxy_events::REPLAY_FAILED).is_empty()
        };
        seen.then_some(())
    })
    .await
    .is_some();
    history.fault(
        fault::CUT_DURING_REPLAY,
        installed.is_ok() && killed && lost && met,
        json!({ "instance": instance, "toxic": cut, "error": installed.err(), "oldKilled": killed,
                "oldLossLogged": lost, "replayMetTheCut": met, "sessionsWithTheNewDaemon": opened(&options) }),
    );
    // Calls made while the cut is still on, answered whenever they are: each exactly once.
    let mut ids = Vec::new();
    for _ in 0..2 {
        ids.push(raw.send("tools/call", sessions_call()).await);
    }
    rig.link.heal(&history).await;
    for id in &ids {
        raw.answer(id, CALL_BOUND).await;
    }
    raw.call_until_served(CALL_BOUND).await;
    finish(&mut raw).await;
    observe(
        &history,
        "replays_failed",
        json!({ "count": events(&options, proxy_events::REPLAY_FAILED).len() }),
    );
    let refusals = std::fs::read_to_string(new.log_path())
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("\"mcp_call_refused\""))
        .count();
    observe(&history, seen::REFUSALS, json!({ "count": refusals }));
    rig.link.proxy.close().await;
    let judgement = chaos::judge_cut_during_replay(&history.ops());
    (history, judgement)
}

#[tokio::test]
async fn the_stream_cut_inside_the_replayed_initialize_into_a_new_daemon_leaves_no_call_stranded() {
    // Sized on a daemon of the same binary: the new one answers in the same sizes.
    let probe = OwnedDaemon::start().await;
    let limit = cut_inside_the_initialize_answer(probe.port()).await;
    drop(probe);
    let (history, judgement) = restart_into(ToxicSpec::new(LimitData { bytes: limit }), true).await;
    assert_meets(
        &history,
        &judgement,
        &[RowOutcome::Surfaced, RowOutcome::Survived],
    );
}

#[tokio::test]
async fn the_replayed_initialize_post_cut_on_its_way_to_a_new_daemon_leaves_no_call_stranded() {
    // A GET (the stream, `/status`) fits in 128 bytes plus the stream's project query (the
    // proxy names its project, as this process would) and the build it announces; a POST
    // carrying `initialize` does not.
    let project = reticle::mcp::project_query(reticle::mcp::own_project_dir().as_deref());
    let bytes = 128 + project.len() as u64 + reticle::mcp::peer_query().len() as u64;
    let (history, judgement) =
        restart_into(ToxicSpec::new(LimitData { bytes }).upstream(), false).await;
    assert_meets(
        &history,
        &judgement,
        &[RowOutcome::Surfaced, RowOutcome::Survived],
    );
    // The proxy saw the replay fail, and gave that session up rather than send calls there.
    let failed = history
        .ops()
        .iter()
        .rfind(|o| o.f == "replays_failed")
        .map(|o| o.value["count"].clone());
    assert!(
        failed.as_ref().and_then(Value::as_u64) >= Some(1),
        "{failed:?}"
    );
}

// ---- a queue flushed under continued traffic ---------------------------------------------

fn echo(n: u64) -> Value {
    json!({ "name": "reticle_test_echo", "arguments": { "n": n } })
}

/// The `n` of every `tools/call` the daemon was sent, in order.
fn posted_ns(relay: &Relay) -> Vec<u64> {
    relay
        .posted()
        .iter()
        .filter_map(|body| serde_json::from_str::<Value>(body).ok())
        .filter(|m| m["method"] == "tools/call")
        .filter_map(|m| m["params"]["arguments"]["n"].as_u64())
        .collect()
}

#[tokio::test]
async fn a_queue_flushed_under_continued_traffic_loses_nothing_and_keeps_the_order() {
    let history = History::new();
    let state = tempfile::tempdir().unwrap();
    let daemon = OwnedDaemon::builder()
        .env(reticle::config::env::TEST_CATALOGUE, "+reticle_test_echo")
        .start()
        .await;
    let relay = Relay::start(daemon.port()).await;
    // Queued calls wait for a session far longer than this outage lasts.
    let options = proxy_options(&env(), relay.port, state.path())
        .env(reticle::config::env::QUEUE_WAIT_MS, "60000");
    let mut raw = RawAgent::start(&history, options.clone());
    assert!(
        raw.warm(CALL_BOUND).await,
        "INCONCLUSIVE: the link never served a call"
    );
    // The outage: the open stream reset, every new one blackholed while /status answers.
    relay.set_mode(Mode::BlackholeStreams);
    let before = drops(&options);
    relay.reset_streams();
    let dropped = poll::within(BOUND, async || (drops(&options) > before).then_some(()))
        .await
        .is_some();
    let failed_before = events(&options, proxy_events::ATTEMPT_FAILED).len();
    let mut ids = Vec::new();
    let mut n = 0;
    for _ in 0..5 {
        n += 1;
        ids.push(raw.send("tools/call", echo(n)).await);
    }
    // The calls wait through at least one failed attempt to open a stream.
    let waited = poll::within(BOUND, async || {
        (events(&options, proxy_events::ATTEMPT_FAILED).len() > failed_before).then_some(())
    })
    .await
    .is_some();
    let unanswered = raw
        .received()
        .iter()
        .filter(|a| ids.contains(&a["id"]))
        .count()
        == 0;
    history.fault(
        fault::STREAMS_BLACKHOLED,
        dropped && waited && unanswered,
        json!({ "dropLogged": dropped, "attemptFailedWhileQueued": waited, "queuedStillUnanswered": unanswered }),
    );
    // Streams open again, and the agent keeps calling until the queue has been flushed and five
    // more calls were made after it.
    let opened = sessions(&options).len();
    relay.set_mode(Mode::Pass);
    history.record(Actor::Nemesis, OpType::Ok, fault::HEAL, json!({}));
    let started = Instant::now();
    let mut after_flush = 0;
    while after_flush < 5 && started.elapsed() < BOUND {
        n += 1;
        ids.push(raw.send("tools/call", echo(n)).await);
        if sessions(&options).len() > opened {
            after_flush += 1;
        }
        tokio::time::sleep(CALL_EVERY).await;
    }
    for id in &ids {
        raw.answer(id, CALL_BOUND).await;
    }
    finish(&mut raw).await;
    observe(&history, seen::POSTED, json!({ "ns": posted_ns(&relay) }));
    let judgement = chaos::judge_queue_flushed(&history.ops());
    assert_meets(&history, &judgement, &[RowOutcome::Survived]);
}
