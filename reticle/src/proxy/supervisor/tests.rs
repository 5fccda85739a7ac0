//! The actor, driven without processes: its future is polled by hand (`tokio_test::task`) on a
//! paused clock, its inputs are fed down its channel, a fake launcher stands in for the worker
//! (recording commands and signals), and the lines it writes to the agent are read back. Each
//! test takes milliseconds; the process-level proxy tests in gates/ stay the judge of the whole.

use std::future::Future;
use std::io;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::sys::signal::Signal;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_test::task::Spawn;

use super::workers::{Launched, Launcher};
use super::*;
use crate::mcp::jsonrpc::{LostPopulation, Ran, TRANSPORT_LOST, TransportLostData};
use crate::probe::PresenceKind;
use crate::proxy::link::LinkCommand;

const PANIC_METHOD: &str = "test/panic";
/// Longer than the first reconnect backoff, and twice of it shorter than the queue wait.
const PAST_THE_FIRST_BACKOFF: Duration = Duration::from_millis(500);

/// What the fake launcher saw.
#[derive(Default)]
struct Launches {
    /// Each started worker's command pipe, by generation (index = generation - 1).
    commands: Vec<mpsc::UnboundedReceiver<LinkCommand>>,
    signals: Vec<(u32, Signal)>,
}

struct FakeLauncher(Arc<Mutex<Launches>>);

impl Launcher for FakeLauncher {
    fn launch(&mut self, generation: u64, _: mpsc::UnboundedSender<Input>) -> io::Result<Launched> {
        let (commands, pipe) = mpsc::unbounded_channel();
        self.0.lock().unwrap().commands.push(pipe);
        Ok(Launched {
            pid: 1000 + generation as u32,
            commands,
        })
    }

    fn signal(&mut self, pid: u32, signal: Signal) {
        self.0.lock().unwrap().signals.push((pid, signal));
    }
}

type Actor = Pin<Box<dyn Future<Output = ExitCode>>>;

struct Rig {
    actor: Spawn<Actor>,
    inputs: mpsc::UnboundedSender<Input>,
    out: std::sync::mpsc::Receiver<String>,
    launches: Arc<Mutex<Launches>>,
    log_path: PathBuf,
    /// The `notifications/message` lines written so far, kept apart from the answers.
    told: Vec<Value>,
    _dir: tempfile::TempDir,
}

fn settings() -> Settings {
    Settings {
        port: 4400,
        queue_wait: Duration::from_secs(2),
        ready_timeout: Duration::from_secs(1),
        reconnect_attempts: 3,
        drain: Duration::from_secs(1),
        panic_method: Some(PANIC_METHOD.into()),
    }
}

impl Rig {
    /// A started actor: it has logged its start and asked worker 1 to connect.
    fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let log_path = dir.path().join("proxy-4400.log");
        let (inputs_tx, inputs) = mpsc::unbounded_channel();
        let (out_tx, out) = std::sync::mpsc::channel();
        let launches = Arc::new(Mutex::new(Launches::default()));
        let supervisor = Supervisor::new(
            settings(),
            ProxyLog::at(&log_path).unwrap(),
            AgentOut::queued_only(out_tx),
            Workers::new(Box::new(FakeLauncher(launches.clone())), inputs_tx.clone()),
        );
        let actor: Actor = Box::pin(supervisor.serve(inputs));
        let mut rig = Self {
            actor: tokio_test::task::spawn(actor),
            inputs: inputs_tx,
            out,
            launches,
            log_path,
            told: Vec::new(),
            _dir: dir,
        };
        rig.poll();
        rig
    }

    /// Lets the actor handle everything sent so far; it must still be serving.
    fn poll(&mut self) {
        assert!(self.actor.poll().is_pending(), "the actor ended");
    }

    fn send(&mut self, input: Input) {
        self.inputs.send(input).unwrap();
        self.poll();
    }

    /// One line from the agent.
    fn agent(&mut self, message: Value) {
        self.send(Input::Stdin(Line::Text(message.to_string().into_bytes())));
    }

    fn request(&mut self, id: Value, method: &str) {
        self.agent(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": {} }));
    }

    fn initialize(&mut self) {
        self.agent(json!({
            "jsonrpc": "2.0", "id": "init", "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": { "name": "unit", "version": "1" }
            }
        }));
        self.agent(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    }

    /// A report from worker `generation`.
    fn report(&mut self, generation: u64, report: Report) {
        self.send(Input::Worker { generation, report });
    }

    /// Every line written to the agent since the last look, but what was said to its host
    /// (`notifications/message`, kept for [`Self::told_host`]).
    fn written(&mut self) -> Vec<Value> {
        let lines: Vec<Value> = self
            .out
            .try_iter()
            .map(|line| serde_json::from_str(&line).unwrap())
            .collect();
        let (told, rest) = lines
            .into_iter()
            .partition(|line: &Value| line["method"] == "notifications/message");
        self.told.extend(told);
        rest
    }

    /// The events of every `notifications/message` written so far, in order.
    fn told_host(&mut self) -> Vec<(String, String)> {
        self.written();
        self.told
            .iter()
            .map(|line| {
                let params = &line["params"];
                (
                    params["level"].as_str().unwrap().to_string(),
                    params["data"]["event"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    /// Every command worker `generation` was sent since the last look.
    fn commands(&mut self, generation: u64) -> Vec<LinkCommand> {
        let mut launches = self.launches.lock().unwrap();
        let pipe = &mut launches.commands[generation as usize - 1];
        std::iter::from_fn(|| pipe.try_recv().ok()).collect()
    }

    /// The bodies posted by worker `generation` since the last look, parsed, with their seq.
    fn posts(&mut self, generation: u64) -> Vec<(u64, Value)> {
        self.commands(generation)
            .into_iter()
            .map(|command| match command {
                LinkCommand::Post { seq, body, .. } => (seq, serde_json::from_str(&body).unwrap()),
                other => panic!("expected a post, got {other:?}"),
            })
            .collect()
    }

    /// The one connect command worker `generation` was sent: its attempt id.
    fn connect_command(&mut self, generation: u64) -> (u64, bool) {
        match self.commands(generation).as_slice() {
            [LinkCommand::Connect { attempt, spawn, .. }] => (*attempt, *spawn),
            other => panic!("expected one connect, got {other:?}"),
        }
    }

    /// Worker `generation` opens the session its pending attempt asked for: the epoch.
    fn connect(&mut self, generation: u64) -> u64 {
        let (epoch, _) = self.connect_command(generation);
        self.report(generation, opened(epoch, "s"));
        epoch
    }

    /// The daemon's answer on `epoch` to the proxy id `seq`.
    fn daemon_answers(&mut self, generation: u64, epoch: u64, seq: u64, answer: Value) {
        let mut message = json!({ "jsonrpc": "2.0", "id": seq });
        message
            .as_object_mut()
            .unwrap()
            .extend(answer.as_object().unwrap().clone());
        self.report(
            generation,
            Report::Message {
                epoch,
                data: message.to_string(),
            },
        );
    }

    /// The proxy log's events so far, in order.
    fn events(&self) -> Vec<(String, Value)> {
        std::fs::read_to_string(&self.log_path)
            .unwrap_or_default()
            .lines()
            .map(|line| {
                let line: Value = serde_json::from_str(line).unwrap();
                (line["event"].as_str().unwrap().to_string(), line)
            })
            .collect()
    }

    fn logged(&self, event: &str) -> Vec<Value> {
        self.events()
            .into_iter()
            .filter(|(name, _)| name == event)
            .map(|(_, line)| line)
            .collect()
    }
}

/// The worker's report that session `epoch` is open.
fn opened(epoch: u64, session: &str) -> Report {
    Report::Connected {
        epoch,
        session: session.into(),
        instance: "i".into(),
        catalogue: None,
        spawned: None,
    }
}

/// The typed data of a -32001 answer.
fn lost(answer: &Value) -> TransportLostData {
    assert_eq!(answer["error"]["code"], TRANSPORT_LOST, "{answer}");
    TransportLostData::read(&answer["error"]["data"]).expect("typed -32001 data")
}

/// The agent is initialized and a session is open and confirmed: its epoch.
fn confirmed_session(rig: &mut Rig) -> u64 {
    rig.initialize();
    let epoch = rig.connect(1);
    let posts = rig.posts(1);
    let replay_seq = posts[0].0;
    rig.daemon_answers(1, epoch, replay_seq, json!({ "result": {} }));
    rig.written();
    epoch
}

/// A confirmed session carrying the calls `ids`, posted in order: (epoch, their proxy ids).
fn calls_on_a_session(rig: &mut Rig, ids: &[Value]) -> (u64, Vec<u64>) {
    let epoch = confirmed_session(rig);
    for id in ids {
        rig.request(id.clone(), "tools/call");
    }
    let seqs = rig.posts(1).into_iter().map(|(seq, _)| seq).collect();
    (epoch, seqs)
}

#[tokio::test(start_paused = true)]
async fn a_forwarded_tool_call_carries_the_agents_own_id_in_its_meta() {
    let mut rig = Rig::start();
    rig.initialize();
    rig.written();
    rig.request(json!("two"), "tools/call");
    rig.request(json!(3), "ping");
    let epoch = rig.connect(1);
    let (replay_seq, _) = rig.posts(1)[0].clone();
    rig.daemon_answers(1, epoch, replay_seq, json!({ "result": {} }));
    let calls = rig.posts(1);
    let call = calls
        .iter()
        .find(|(_, body)| body["method"] == "tools/call")
        .expect("the call was posted");
    assert_eq!(call.1["id"], json!(call.0), "under the proxy's id");
    assert_eq!(
        call.1["params"]["_meta"][crate::wire::trace::CLIENT_ID_META],
        "two"
    );
    let ping = calls.iter().find(|(_, body)| body["method"] == "ping");
    assert!(
        ping.is_none_or(|(_, body)| body["params"].get("_meta").is_none()),
        "only tool calls carry it: {ping:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn queued_calls_wait_for_the_replayed_handshake_then_go_in_arrival_order() {
    let mut rig = Rig::start();
    rig.initialize();
    let written = rig.written();
    assert_eq!(written.len(), 1, "{written:?}");
    assert_eq!(written[0]["id"], "init", "initialize is answered at once");
    assert!(written[0]["result"]["protocolVersion"].is_string());

    rig.request(json!(1), "tools/call");
    rig.request(json!("two"), "tools/call");
    let epoch = rig.connect(1);
    let posts = rig.posts(1);
    assert_eq!(posts.len(), 2, "only the handshake and its note: {posts:?}");
    let (replay_seq, replayed) = &posts[0];
    assert_eq!(replayed["method"], "initialize");
    assert_eq!(replayed["id"], json!(replay_seq), "under the proxy's id");
    assert_eq!(posts[1].1["method"], "notifications/initialized");

    rig.daemon_answers(1, epoch, *replay_seq, json!({ "result": {} }));
    assert!(rig.written().is_empty(), "the replay's answer is swallowed");
    let calls = rig.posts(1);
    assert_eq!(calls.len(), 2, "the queue is flushed: {calls:?}");
    assert!(calls[0].0 < calls[1].0, "in arrival order");
    assert!(calls.iter().all(|(seq, body)| body["id"] == json!(seq)));

    rig.daemon_answers(1, epoch, calls[1].0, json!({ "result": { "n": 2 } }));
    rig.daemon_answers(1, epoch, calls[0].0, json!({ "result": { "n": 1 } }));
    let answers = rig.written();
    assert_eq!(answers.len(), 2);
    assert_eq!(answers[0]["id"], "two");
    assert_eq!(answers[0]["result"]["n"], 2);
    assert_eq!(answers[1]["id"], 1);
}

#[tokio::test(start_paused = true)]
async fn a_call_is_answered_exactly_once_and_a_second_answer_is_dropped() {
    let mut rig = Rig::start();
    let (epoch, calls) = calls_on_a_session(&mut rig, &[json!(7)]);
    let seq = calls[0];
    rig.daemon_answers(1, epoch, seq, json!({ "result": {} }));
    rig.daemon_answers(1, epoch, seq, json!({ "result": { "again": true } }));
    let answers = rig.written();
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(answers[0]["id"], 7);
    assert_eq!(rig.logged(events::LATE_ANSWER_DROPPED).len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_call_is_forwarded_and_never_answered_even_when_the_daemon_answers() {
    let mut rig = Rig::start();
    let (epoch, calls) = calls_on_a_session(&mut rig, &[json!("slow"), json!("kept")]);
    rig.agent(
        json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
                      "params": { "requestId": "slow" } }),
    );
    let forwarded = rig.posts(1);
    assert_eq!(forwarded.len(), 1, "{forwarded:?}");
    assert_eq!(
        forwarded[0].1["params"]["requestId"],
        json!(calls[0]),
        "under the proxy's id"
    );
    // An older daemon still answers a cancelled call: the agent never sees it.
    rig.daemon_answers(
        1,
        epoch,
        calls[0],
        json!({ "error": { "code": -32800, "message": "x" } }),
    );
    // Control: the call not cancelled is answered.
    rig.daemon_answers(1, epoch, calls[1], json!({ "result": {} }));
    let answers = rig.written();
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(answers[0]["id"], "kept");
    assert_eq!(rig.logged(events::CALL_CANCELLED)[0]["forwarded"], true);
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_queued_call_is_never_sent_nor_answered_at_its_deadline() {
    let mut rig = Rig::start();
    rig.initialize();
    rig.written();
    rig.request(json!(1), "tools/call");
    rig.request(json!(2), "tools/call");
    rig.agent(
        json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
                      "params": { "requestId": 1 } }),
    );
    tokio::time::advance(settings().queue_wait + Duration::from_millis(1)).await;
    rig.poll();
    // Control: the other queued call is answered -32001 (did not run) at its deadline.
    let answers = rig.written();
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(answers[0]["id"], 2);
    assert_eq!(lost(&answers[0]).ran, Ran::No);
    assert_eq!(rig.logged(events::CALL_CANCELLED)[0]["forwarded"], false);
}

#[tokio::test(start_paused = true)]
async fn a_refused_replay_holds_calls_until_their_deadline_then_answers_that_they_did_not_run() {
    let mut rig = Rig::start();
    rig.initialize();
    rig.written();
    let epoch = rig.connect(1);
    let (replay_seq, _) = rig.posts(1)[0].clone();
    rig.daemon_answers(
        1,
        epoch,
        replay_seq,
        json!({ "error": { "code": -32602, "message": "no" } }),
    );
    assert_eq!(rig.logged(events::REPLAY_REFUSED).len(), 1);
    rig.request(json!(1), "tools/call");
    assert!(
        rig.posts(1).is_empty(),
        "no call reaches a session that refused"
    );

    tokio::time::advance(settings().queue_wait + Duration::from_millis(1)).await;
    rig.poll();
    let answers = rig.written();
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(answers[0]["id"], 1);
    let data = lost(&answers[0]);
    assert_eq!(data.population, LostPopulation::NeverSent);
    assert_eq!(data.ran, Ran::No);
    assert_eq!(
        data.reason,
        "the daemon session never confirmed the replayed handshake"
    );
    assert_eq!(rig.logged(events::QUEUE_EXPIRED).len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_drop_answers_posted_calls_and_requeues_unposted_ones_for_the_next_session() {
    let mut rig = Rig::start();
    let (epoch, calls) = calls_on_a_session(&mut rig, &[json!("posted"), json!("unposted")]);
    rig.report(
        1,
        Report::Posting {
            epoch,
            seq: calls[0],
        },
    );
    rig.report(
        1,
        Report::Dropped {
            epoch,
            reason: "sse_ended".into(),
            detail: String::new(),
        },
    );
    let answers = rig.written();
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(answers[0]["id"], "posted");
    let data = lost(&answers[0]);
    assert_eq!(data.population, LostPopulation::InFlightLost);
    assert_eq!(data.ran, Ran::Unknown);
    assert_eq!(data.reason, "sse_ended");

    // A call is waiting, so the next attempt starts at once, and may start a daemon.
    let (next, spawn) = rig.connect_command(1);
    assert!(spawn);
    rig.report(1, opened(next, "s2"));
    let posts = rig.posts(1);
    assert_eq!(posts[0].1["method"], "initialize", "replayed again first");
    assert_eq!(
        posts.len(),
        2,
        "the call waits for the new replay: {posts:?}"
    );
    rig.daemon_answers(1, next, posts[0].0, json!({ "result": {} }));
    let resent = rig.posts(1);
    assert_eq!(resent.len(), 1);
    assert_eq!(
        resent[0].0, calls[1],
        "the unposted call goes on the new session"
    );
    rig.daemon_answers(1, next, resent[0].0, json!({ "result": {} }));
    assert_eq!(rig.written()[0]["id"], "unposted");
}

#[tokio::test(start_paused = true)]
async fn the_host_hears_the_link_lost_and_back_and_a_new_daemon_at_the_level_it_set() {
    let mut rig = Rig::start();
    assert!(rig.told_host().is_empty(), "nothing before initialize");
    let (epoch, _) = calls_on_a_session(&mut rig, &[]);
    let drop_session = |rig: &mut Rig, epoch| {
        rig.report(
            1,
            Report::Dropped {
                epoch,
                reason: "sse_ended".into(),
                detail: String::new(),
            },
        );
    };
    drop_session(&mut rig, epoch);
    assert_eq!(rig.told_host(), [("warning".into(), "link_lost".into())]);
    // Back, on a daemon with another instance: the link is back and a new daemon serves.
    tokio::time::advance(Duration::from_secs(5)).await;
    rig.poll();
    let (next, _) = rig.connect_command(1);
    let other = Report::Connected {
        epoch: next,
        session: "s2".into(),
        instance: "another".into(),
        catalogue: None,
        spawned: None,
    };
    rig.report(1, other);
    let told = rig.told_host();
    assert_eq!(
        told[1..],
        [
            ("notice".into(), "link_restored".into()),
            ("warning".into(), "daemon_restarted".into())
        ]
    );
    // At `error`, a lost link (a warning) is not said; the level is answered here, not sent on.
    rig.agent(
        json!({ "jsonrpc": "2.0", "id": "lvl", "method": "logging/setLevel",
                      "params": { "level": "error" } }),
    );
    let answers = rig.written();
    assert_eq!(answers[0]["id"], "lvl");
    assert_eq!(answers[0]["result"], json!({}));
    let posts = rig.posts(1);
    assert!(
        posts
            .iter()
            .all(|(_, body)| body["method"] != "logging/setLevel"),
        "{posts:?}"
    );
    drop_session(&mut rig, next);
    assert_eq!(rig.told_host().len(), 3, "nothing more at level error");
    // A level no one has is refused -32602.
    rig.agent(
        json!({ "jsonrpc": "2.0", "id": "bad", "method": "logging/setLevel",
                      "params": { "level": "loud" } }),
    );
    assert_eq!(rig.written()[0]["error"]["code"], -32602);
}

#[tokio::test(start_paused = true)]
async fn a_failed_replay_post_gives_the_session_up_and_replays_into_the_next() {
    let mut rig = Rig::start();
    rig.initialize();
    let epoch = rig.connect(1);
    let (replay_seq, _) = rig.posts(1)[0].clone();
    rig.request(json!(1), "tools/call");
    rig.report(
        1,
        Report::PostFailed {
            epoch,
            seq: replay_seq,
            reason: "reset".into(),
            reached: None,
            retryable: false,
        },
    );
    assert_eq!(rig.logged(events::REPLAY_FAILED).len(), 1);
    let lost_lines = rig.logged(events::CONNECTION_LOST);
    assert_eq!(lost_lines.last().unwrap()["reason"], "replay_failed");
    let next = rig.connect(1);
    assert_ne!(next, epoch);
    let posts = rig.posts(1);
    assert_eq!(posts[0].1["method"], "initialize");
    rig.daemon_answers(1, next, posts[0].0, json!({ "result": {} }));
    assert_eq!(
        rig.posts(1).len(),
        1,
        "the call goes once the new replay is confirmed"
    );
    assert_eq!(rig.written().len(), 1, "only initialize's answer so far");
}

#[tokio::test(start_paused = true)]
async fn a_free_port_with_nothing_waiting_goes_dormant_and_the_next_call_wakes_it() {
    let mut rig = Rig::start();
    let (attempt, spawn) = rig.connect_command(1);
    assert!(spawn, "the first attempt may start a daemon");
    rig.report(
        1,
        Report::Unreachable {
            attempt,
            presence: PresenceKind::Free,
            obstacle: "nothing listens".into(),
            definitive: false,
        },
    );
    let states = rig.logged(events::STATE);
    assert_eq!(states.last().unwrap()["to"], "dormant");
    assert_eq!(
        rig.logged(events::ATTEMPT_FAILED)[0]["presence"],
        "free",
        "the typed presence is logged as its word"
    );
    assert!(rig.commands(1).is_empty(), "a dormant proxy does not retry");
    rig.request(json!(1), "tools/call");
    let (_, spawn) = rig.connect_command(1);
    assert!(spawn, "a call may start a daemon");
    assert_eq!(
        rig.logged(events::STATE).last().unwrap()["to"],
        "reconnecting"
    );
}

#[tokio::test(start_paused = true)]
async fn a_worker_death_answers_calls_in_flight_and_a_new_worker_takes_over() {
    let mut rig = Rig::start();
    let (epoch, calls) = calls_on_a_session(&mut rig, &[json!(1)]);
    let seq = calls[0];
    rig.report(1, Report::Posting { epoch, seq });
    rig.send(Input::WorkerGone {
        generation: 1,
        status: "killed by SIGKILL".into(),
    });
    let answers = rig.written();
    assert_eq!(answers.len(), 1);
    let data = lost(&answers[0]);
    assert_eq!(data.reason, "link_process_died");
    assert_eq!(rig.logged(events::LINK_PROCESS_EXITED).len(), 1);

    tokio::time::advance(crate::proxy::settings::BACKOFF_CAP).await;
    rig.poll();
    let (attempt, _) = rig.connect_command(2);
    // The dead worker's late words are not taken for the new one's.
    rig.report(1, opened(attempt, "stale"));
    assert_eq!(
        rig.logged(events::DAEMON_SESSION).len(),
        1,
        "a stale worker is ignored"
    );
    rig.report(2, opened(attempt, "s2"));
    assert_eq!(rig.logged(events::DAEMON_SESSION).len(), 2);
    assert_eq!(rig.posts(2)[0].1["method"], "initialize");
}

#[tokio::test(start_paused = true)]
async fn a_worker_killed_soon_after_connecting_is_replaced_by_one_attempt_that_carries_the_call() {
    let mut rig = Rig::start();
    let epoch = confirmed_session(&mut rig);
    // The call arrives as the worker dies (the `lsof … | xargs kill -9` recipe): it never left.
    rig.request(json!(1), "tools/call");
    rig.posts(1);
    rig.send(Input::WorkerGone {
        generation: 1,
        status: "killed by SIGKILL".into(),
    });
    assert!(rig.written().is_empty(), "the unsent call waits");
    // Past the pause for a worker that died soon after it started (within the call's queue
    // wait): the new worker was asked to connect once, however long its attempt takes.
    tokio::time::advance(PAST_THE_FIRST_BACKOFF).await;
    rig.poll();
    let (attempt, spawn) = rig.connect_command(2);
    assert!(spawn, "a waiting call may start a daemon");
    assert_ne!(attempt, epoch);
    tokio::time::advance(PAST_THE_FIRST_BACKOFF).await;
    rig.poll();
    assert!(
        rig.commands(2).is_empty(),
        "no second attempt beside the one under way"
    );
    rig.report(2, opened(attempt, "s2"));
    let mut posts = rig.posts(2);
    assert_eq!(posts[0].1["method"], "initialize");
    rig.daemon_answers(2, attempt, posts[0].0, json!({ "result": {} }));
    posts.extend(rig.posts(2));
    let call: Vec<u64> = posts
        .iter()
        .filter(|(_, body)| body["method"] == "tools/call")
        .map(|(seq, _)| *seq)
        .collect();
    assert_eq!(call.len(), 1, "the waiting call goes on the new session");
    rig.daemon_answers(2, attempt, call[0], json!({ "result": { "ok": true } }));
    let answers = rig.written();
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0]["id"], 1);
    assert_eq!(answers[0]["result"]["ok"], true);
}

#[tokio::test(start_paused = true)]
async fn a_panic_while_handling_a_request_answers_it_and_serving_goes_on() {
    let mut rig = Rig::start();
    rig.request(json!(9), PANIC_METHOD);
    let answers = rig.written();
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0]["id"], 9);
    assert_eq!(answers[0]["error"]["code"], jsonrpc::INTERNAL_ERROR);
    assert_eq!(rig.logged(events::PROXY_PANIC).len(), 1);
    rig.request(json!(10), "ping");
    assert_eq!(rig.written()[0]["id"], 10, "still serving");
}

#[tokio::test(start_paused = true)]
async fn stdin_closing_drains_what_is_owed_then_exits() {
    let mut rig = Rig::start();
    let (epoch, calls) = calls_on_a_session(&mut rig, &[json!("sent"), json!("answered")]);
    rig.send(Input::StdinClosed);
    rig.daemon_answers(1, epoch, calls[1], json!({ "result": {} }));
    assert_eq!(
        rig.written()[0]["id"],
        "answered",
        "answers still flow while draining"
    );

    tokio::time::advance(settings().drain + Duration::from_millis(1)).await;
    assert!(rig.actor.poll().is_ready(), "the drain ends the proxy");
    let answers = rig.written();
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0]["id"], "sent");
    let data = lost(&answers[0]);
    assert_eq!(data.population, LostPopulation::OwedAtExit);
    assert_eq!(data.ran, Ran::Unknown);
    assert_eq!(rig.logged(events::UNANSWERED_AT_EXIT).len(), 1);
    let signals = rig.launches.lock().unwrap().signals.clone();
    assert_eq!(signals, [(1001, Signal::SIGTERM)], "the worker is stopped");
}

#[tokio::test(start_paused = true)]
async fn a_successful_answer_is_forwarded_as_the_daemon_wrote_its_result() {
    let mut rig = Rig::start();
    let epoch = confirmed_session(&mut rig);
    rig.request(json!("list"), "tools/list");
    let seq = rig.posts(1)[0].0;
    // Written by hand, in an order and spacing a parse-and-rewrite would not keep.
    let result = r#"{"tools":[{"name":"z","inputSchema":{"type":"object"}},{"name":"a"}], "x" :1}"#;
    rig.report(
        1,
        Report::Message {
            epoch,
            data: format!(r#"{{"jsonrpc":"2.0","id":{seq},"result":{result}}}"#),
        },
    );
    let lines: Vec<String> = rig.out.try_iter().collect();
    assert_eq!(
        lines,
        vec![format!(r#"{{"jsonrpc":"2.0","id":"list","result":{result}}}"#) + "\n"]
    );
    // An answer with any other member is read whole and still delivered once, under the agent's id.
    rig.request(json!(9), "tools/call");
    let seq = rig.posts(1)[0].0;
    rig.daemon_answers(
        1,
        epoch,
        seq,
        json!({ "result": { "n": 1 }, "extra": true }),
    );
    let answers = rig.written();
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(
        (answers[0]["id"].clone(), answers[0]["extra"].clone()),
        (json!(9), json!(true))
    );
}

/// A session opened on a daemon whose catalogue summary has this hash: its epoch.
fn confirmed_session_on(rig: &mut Rig, hash: &str) -> u64 {
    rig.initialize();
    let (epoch, _) = rig.connect_command(1);
    rig.report(
        1,
        Report::Connected {
            epoch,
            session: "s".into(),
            instance: "i".into(),
            catalogue: Some(crate::wire::CatalogueSummary {
                version: "5".into(),
                hash: hash.into(),
                tools: 1,
            }),
            spawned: None,
        },
    );
    let replay_seq = rig.posts(1)[0].0;
    rig.daemon_answers(1, epoch, replay_seq, json!({ "result": {} }));
    rig.written();
    epoch
}

/// The daemon answers the one `tools/list` just posted with `result`.
fn daemon_lists(rig: &mut Rig, epoch: u64, result: &str) {
    let posts = rig.posts(1);
    assert_eq!(
        posts.len(),
        1,
        "one tools/list went to the daemon: {posts:?}"
    );
    let seq = posts[0].0;
    rig.report(
        1,
        Report::Message {
            epoch,
            data: format!(r#"{{"jsonrpc":"2.0","id":{seq},"result":{result}}}"#),
        },
    );
}

#[tokio::test(start_paused = true)]
async fn a_tools_list_is_answered_from_the_list_of_the_catalogue_the_session_announced() {
    let mut rig = Rig::start();
    let epoch = confirmed_session_on(&mut rig, "h1");
    let result = r#"{"tools":[{"name":"a"}]}"#;
    rig.request(json!(1), "tools/list");
    daemon_lists(&mut rig, epoch, result);
    assert_eq!(
        rig.written(),
        [json!({"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"}]}})]
    );
    // The same catalogue: answered here, the daemon is not asked again.
    rig.request(json!(2), "tools/list");
    assert!(
        rig.posts(1).is_empty(),
        "the second list was answered by the proxy"
    );
    assert_eq!(
        rig.written(),
        [json!({"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a"}]}})]
    );
    assert_eq!(
        rig.logged("mcp_answered_by_proxy").last().unwrap()["how"],
        "catalogue_cache"
    );
    // Params that are not an object go to the daemon, for its refusal.
    rig.agent(json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": [1] }));
    assert_eq!(
        rig.posts(1).len(),
        1,
        "a list with odd params went to the daemon"
    );
    // The daemon says its list changed: the next list is asked of it again.
    rig.report(
        1,
        Report::Message {
            epoch,
            data: r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#.into(),
        },
    );
    rig.written();
    rig.request(json!(4), "tools/list");
    assert_eq!(
        rig.posts(1).len(),
        1,
        "after list_changed the list went to the daemon"
    );
}

/// The negative control: a session that announced no catalogue never gets a cached list.
#[tokio::test(start_paused = true)]
async fn a_session_without_a_catalogue_summary_always_asks_the_daemon() {
    let mut rig = Rig::start();
    let epoch = confirmed_session(&mut rig);
    rig.request(json!(1), "tools/list");
    daemon_lists(&mut rig, epoch, r#"{"tools":[]}"#);
    rig.request(json!(2), "tools/list");
    assert_eq!(
        rig.posts(1).len(),
        1,
        "without a summary the list goes to the daemon"
    );
}
