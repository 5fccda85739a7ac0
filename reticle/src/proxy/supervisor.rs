//! The supervisor, `reticle mcp`: owns the agent's stdio and every promise made on it, and holds
//! no socket at all, so nothing done to the daemon's port can reach it. The daemon link lives in
//! a worker process it (re)starts and talks to over pipes ([`super::link`]).
//!
//! It is one actor: stdin lines, worker reports and timers arrive as [`Input`]s and are handled
//! synchronously, one at a time, inside a panic guard. States: `connecting` → `connected` ⇄
//! `reconnecting` (capped, jittered backoff) → `dormant` (woken by the next request, which may
//! start a daemon) → `draining` once stdin closes. It never exits for a lost daemon or a spent
//! budget. Every request is answered exactly once: by the daemon, by the proxy itself
//! (`initialize`, `ping` while disconnected, a matching catalogue, garbage), or with -32001.

use std::collections::HashSet;
use std::io::{Read, Write};
use std::panic::AssertUnwindSafe;
use std::process::{ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

use super::calls::{Book, Call, CallState, LinkLoss};
use super::lines::{Line, LineSplitter};
use super::link::{Command, Report};
use super::settings::{self, MAX_LINE_BYTES, Settings, WORKER_SILENCE};
use crate::daemon::{DaemonLog, StateDir};
use crate::mcp::jsonrpc::{self, INTERNAL_ERROR, INVALID_REQUEST, Kind};
use crate::mcp::protocol;
use crate::wire::CatalogueSummary;

/// Everything the actor reacts to.
#[derive(Debug)]
enum Input {
    Stdin(Line),
    StdinClosed,
    Worker { generation: u64, report: Report },
    WorkerGone { generation: u64, status: String },
}

/// The link's state, as logged and as the agent would describe it.
#[derive(Debug, Clone, PartialEq)]
enum Link {
    /// The first attempt, at start.
    Connecting,
    /// A daemon session is open.
    Connected {
        epoch: u64,
        catalogue: Option<CatalogueSummary>,
    },
    /// Lost; retrying with backoff.
    Reconnecting,
    /// Not retrying until the next request.
    Dormant,
}

impl Link {
    fn word(&self) -> &'static str {
        match self {
            Link::Connecting => "connecting",
            Link::Connected { .. } => "connected",
            Link::Reconnecting => "reconnecting",
            Link::Dormant => "dormant",
        }
    }
}

/// One connect attempt under way in the worker.
#[derive(Debug, Clone, Copy)]
struct Attempt {
    id: u64,
    spawn: bool,
}

/// A lost link, from the drop until it is back.
#[derive(Debug, Clone)]
struct Outage {
    reason: String,
    since: Instant,
    calls_lost: usize,
}

/// The worker process as the supervisor holds it.
struct Worker {
    generation: u64,
    pid: u32,
    commands: mpsc::UnboundedSender<Command>,
    started: Instant,
}

/// The proxy log (`proxy-<port>.log` in the state dir); stderr when the file cannot be had.
struct ProxyLog {
    file: Option<DaemonLog>,
}

impl ProxyLog {
    fn open(port: u16) -> Self {
        let state = StateDir::from_env();
        let path = state.root().join(format!("proxy-{port}.log"));
        let rolled = state.root().join(format!("proxy-{port}.log.1"));
        let run = uuid::Uuid::new_v4().to_string();
        let file = state
            .ensure()
            .and_then(|()| DaemonLog::open(&path, rolled, &run))
            .map_err(|err| {
                eprintln!(
                    "reticle mcp: cannot open the proxy log {} ({err}); logging to stderr",
                    path.display()
                )
            })
            .ok();
        Self { file }
    }

    fn event(&self, event: &str, fields: Value) {
        match &self.file {
            Some(file) => file.event(event, fields),
            None => eprintln!("{}", json!({ "event": event, "fields": fields })),
        }
    }
}

/// Runs `reticle mcp` until stdin closes and what is owed is answered or logged.
pub fn run(port: u16) -> ExitCode {
    let settings = match Settings::from_env(port) {
        Ok(settings) => settings,
        Err(err) => {
            eprintln!("reticle mcp: {err}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("reticle mcp: cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    // A panic is caught where it happens (see `guarded`); say so in one line on stderr (which
    // an MCP client keeps as the server's log) instead of a backtrace.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("reticle mcp: internal error caught, still serving: {info}");
    }));
    runtime.block_on(async move {
        let (inputs_tx, inputs) = mpsc::unbounded_channel();
        let stdin_tx = inputs_tx.clone();
        std::thread::spawn(move || read_stdin(stdin_tx));
        let (out_tx, out_rx) = std::sync::mpsc::channel::<String>();
        let stdout_broken = Arc::new(AtomicBool::new(false));
        let broken = stdout_broken.clone();
        let writer = std::thread::spawn(move || write_stdout(out_rx, broken));
        let mut supervisor = Supervisor::new(settings, inputs_tx, out_tx, stdout_broken);
        let code = supervisor.serve(inputs).await;
        drop(supervisor);
        let _ = writer.join();
        code
    })
}

fn read_stdin(tx: mpsc::UnboundedSender<Input>) {
    let mut splitter = LineSplitter::new(MAX_LINE_BYTES);
    let mut stdin = std::io::stdin().lock();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match stdin.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                for line in splitter.feed(&buf[..n]) {
                    if tx.send(Input::Stdin(line)).is_err() {
                        return;
                    }
                }
            }
        }
    }
    if let Some(line) = splitter.finish() {
        let _ = tx.send(Input::Stdin(line));
    }
    let _ = tx.send(Input::StdinClosed);
}

fn write_stdout(rx: std::sync::mpsc::Receiver<String>, broken: Arc<AtomicBool>) {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    while let Ok(first) = rx.recv() {
        let mut ok = out.write_all(first.as_bytes()).is_ok();
        while let Ok(more) = rx.try_recv() {
            ok = ok && out.write_all(more.as_bytes()).is_ok();
        }
        ok = ok && out.flush().is_ok();
        if !ok {
            broken.store(true, Ordering::SeqCst);
        }
    }
}

struct Supervisor {
    settings: Settings,
    port: u16,
    log: ProxyLog,
    inputs: mpsc::UnboundedSender<Input>,
    out: std::sync::mpsc::Sender<String>,
    stdout_broken: Arc<AtomicBool>,

    worker: Option<Worker>,
    generation: u64,
    /// Worker deaths in a row that came soon after their start (slows respawning).
    worker_failures: u32,
    last_heard: Instant,

    link: Link,
    attempt: Option<Attempt>,
    /// When the next reconnect attempt starts.
    retry_at: Option<Instant>,
    /// Failed attempts since the link was last up.
    failures: u32,
    outage: Option<Outage>,
    /// The daemon announced its shutdown on the current stream.
    retiring: bool,

    book: Book,
    next_seq: u64,
    /// Proxy ids of replayed handshakes, whose answers are swallowed.
    replays: HashSet<u64>,
    /// The agent's first `initialize`, replayed into every daemon session.
    handshake: Option<Map<String, Value>>,
    /// The agent's `notifications/initialized`, replayed after it.
    initialized_note: Option<Map<String, Value>>,
    /// The current daemon session has had the handshake (and the note).
    session_has_handshake: bool,
    session_has_note: bool,
    /// The current daemon session may be sent calls: it answered the replayed handshake (or
    /// there is none to replay yet). Until then calls wait in the queue, so none can reach a
    /// session the handshake never reached.
    session_ready: bool,

    /// The catalogue of the daemon last connected.
    last_catalogue: Option<CatalogueSummary>,
    /// The last `tools/list` answer, with the catalogue it came from.
    tool_cache: Option<(CatalogueSummary, Value)>,

    /// The request being handled, so a panic can still answer it.
    in_hand: Option<(Value, Option<u64>)>,
    drain_until: Option<Instant>,
    finished: Option<ExitCode>,
}

impl Supervisor {
    fn new(
        settings: Settings,
        inputs: mpsc::UnboundedSender<Input>,
        out: std::sync::mpsc::Sender<String>,
        stdout_broken: Arc<AtomicBool>,
    ) -> Self {
        let port = settings.port;
        Self {
            log: ProxyLog::open(port),
            port,
            settings,
            inputs,
            out,
            stdout_broken,
            worker: None,
            generation: 0,
            worker_failures: 0,
            last_heard: Instant::now(),
            link: Link::Connecting,
            attempt: None,
            retry_at: None,
            failures: 0,
            outage: None,
            retiring: false,
            book: Book::default(),
            next_seq: 1,
            replays: HashSet::new(),
            handshake: None,
            initialized_note: None,
            session_has_handshake: false,
            session_has_note: false,
            session_ready: false,
            last_catalogue: None,
            tool_cache: None,
            in_hand: None,
            drain_until: None,
            finished: None,
        }
    }

    async fn serve(&mut self, mut inputs: mpsc::UnboundedReceiver<Input>) -> ExitCode {
        self.log.event(
            "mcp_proxy_start",
            json!({
                "port": self.port,
                "version": crate::VERSION,
                "queueWaitMs": self.settings.queue_wait.as_millis() as u64,
                "readyTimeoutMs": self.settings.ready_timeout.as_millis() as u64,
                "reconnectAttempts": self.settings.reconnect_attempts,
                "drainMs": self.settings.drain.as_millis() as u64,
            }),
        );
        self.guarded(|s| s.start_attempt(true));
        loop {
            if let Some(code) = self.finished.take() {
                self.shutdown_worker();
                return code;
            }
            let wake = self.next_wake();
            let input = tokio::select! {
                input = inputs.recv() => input,
                _ = tokio::time::sleep_until(wake.into()) => None,
            };
            match input {
                Some(input) => {
                    self.guarded(|s| s.handle(input));
                    // A steady stream of inputs must not starve the timers.
                    if self.next_wake() <= Instant::now() {
                        self.guarded(|s| s.tick());
                    }
                }
                None => self.guarded(|s| s.tick()),
            }
        }
    }

    /// Runs one step; a panic inside it is logged, the request in hand (if any) is answered
    /// -32603, and the proxy carries on.
    fn guarded(&mut self, step: impl FnOnce(&mut Self)) {
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| step(self)));
        if let Err(panic) = outcome {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            self.log.event(
                "mcp_proxy_panic",
                json!({ "message": message, "note": "still serving: the panic was caught" }),
            );
            if let Some((id, seq)) = self.in_hand.take() {
                let owed = match seq {
                    Some(seq) => self.book.take(seq).is_some(),
                    None => true,
                };
                if owed {
                    let text = format!(
                        "internal error inside `reticle mcp` while handling this call ({message}); it was not run. The proxy is still serving: retry it."
                    );
                    self.answer_locally(
                        &id,
                        "internal_error",
                        jsonrpc::error_response(&id, INTERNAL_ERROR, &text, None),
                    );
                }
            }
        }
        self.in_hand = None;
    }

    fn next_wake(&self) -> Instant {
        let now = Instant::now();
        let mut wake = now + Duration::from_secs(1);
        for at in [self.retry_at, self.book.next_deadline(), self.drain_until]
            .into_iter()
            .flatten()
        {
            wake = wake.min(at);
        }
        wake.max(now)
    }

    // ---- inputs ----

    fn handle(&mut self, input: Input) {
        match input {
            Input::Stdin(Line::Text(bytes)) => self.on_client_bytes(&bytes),
            Input::Stdin(Line::Oversize(size)) => {
                let reason = format!(
                    "invalid request: a message of {size} bytes exceeds the {MAX_LINE_BYTES}-byte limit and was discarded unread"
                );
                let answer = jsonrpc::error_response(&Value::Null, INVALID_REQUEST, &reason, None);
                self.answer_locally(&Value::Null, "oversize", answer);
            }
            Input::StdinClosed => self.on_stdin_closed(),
            Input::Worker { generation, report } => {
                if self
                    .worker
                    .as_ref()
                    .is_some_and(|w| w.generation == generation)
                {
                    self.last_heard = Instant::now();
                    self.on_report(report);
                }
            }
            Input::WorkerGone { generation, status } => {
                if self
                    .worker
                    .as_ref()
                    .is_some_and(|w| w.generation == generation)
                {
                    self.on_worker_gone(status);
                }
            }
        }
    }

    fn tick(&mut self) {
        let now = Instant::now();
        if self.retry_at.is_some_and(|at| at <= now) && self.attempt.is_none() {
            self.retry_at = None;
            let spawn = !self.book.queued().is_empty();
            self.start_attempt(spawn);
        }
        let expired: Vec<u64> = self
            .book
            .queued()
            .into_iter()
            .filter(|seq| self.book.get(*seq).is_some_and(|c| c.deadline <= now))
            .collect();
        if !expired.is_empty() {
            let obstacle = self
                .outage
                .as_ref()
                .map(|o| o.reason.clone())
                .unwrap_or_else(|| {
                    if self.connected() {
                        "the daemon session never confirmed the replayed handshake".into()
                    } else {
                        "no daemon session opened in time".into()
                    }
                });
            let loss = LinkLoss::never_sent(self.port, &obstacle, Some(self.settings.queue_wait));
            self.log.event(
                "mcp_queue_expired",
                json!({ "port": self.port, "calls": expired.len(), "state": self.link.word(), "reason": obstacle }),
            );
            for seq in expired {
                self.answer_unsent(seq, &loss);
            }
        }
        if let Some(worker) = &self.worker
            && self.last_heard.elapsed() > WORKER_SILENCE
        {
            self.log.event(
                "mcp_link_process_unresponsive",
                json!({ "workerPid": worker.pid, "silentMs": self.last_heard.elapsed().as_millis() as u64, "action": "killed; a new one takes over" }),
            );
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(worker.pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
            self.last_heard = Instant::now();
        }
        if self.drain_until.is_some_and(|at| at <= now) {
            self.finish_drain();
        }
    }

    // ---- the agent's side ----

    fn on_client_bytes(&mut self, bytes: &[u8]) {
        let Ok(text) = std::str::from_utf8(bytes) else {
            let answer = jsonrpc::error_response(
                &Value::Null,
                jsonrpc::PARSE_ERROR,
                "parse error: the message is not UTF-8",
                None,
            );
            return self.answer_locally(&Value::Null, "garbage", answer);
        };
        if text.trim().is_empty() {
            return;
        }
        let message = match jsonrpc::parse(text) {
            Ok(message) => message,
            Err(invalid) => {
                let id = invalid.id.clone();
                return self.answer_locally(&id, "garbage", invalid.response());
            }
        };
        match message.kind.clone() {
            Kind::Request { id, method } => self.on_request(id, method, message.object),
            Kind::Notification { method } => self.on_notification(&method, message.object),
            Kind::Response { .. } => self.forward_uncounted(message.object, "response"),
        }
    }

    fn on_request(&mut self, id: Value, method: String, object: Map<String, Value>) {
        self.in_hand = Some((id.clone(), None));
        if self.settings.panic_method.as_deref() == Some(method.as_str()) {
            panic!(
                "test fault hook {} fired while handling '{method}'",
                crate::config::env::TEST_PANIC_METHOD
            );
        }
        if self.book.seq_of(&id).is_some() {
            let reason = format!(
                "invalid request: id {id} is already used by a call still in flight; give every request its own id"
            );
            let answer = jsonrpc::error_response(&id, INVALID_REQUEST, &reason, None);
            return self.answer_locally(&id, "duplicate_id", answer);
        }
        match method.as_str() {
            "initialize" => return self.on_initialize(id, object),
            "ping" if !self.connected() => {
                let answer = jsonrpc::result_response(&id, json!({}));
                return self.answer_locally(&id, "ping", answer);
            }
            _ => {}
        }
        let seq = self.next_seq();
        self.in_hand = Some((id.clone(), Some(seq)));
        self.book.insert(
            seq,
            Call {
                client_id: id,
                method,
                object,
                state: CallState::Queued,
                deadline: Instant::now() + self.settings.queue_wait,
            },
        );
        if self.ready() {
            self.send_call(seq);
        } else {
            self.demand();
        }
    }

    /// Answered here, at once, whatever the daemon's state: the handshake describes Reticle, and
    /// it is replayed into every daemon session before anything else reaches it.
    fn on_initialize(&mut self, id: Value, object: Map<String, Value>) {
        let asked = object
            .get("params")
            .and_then(|p| p.get("protocolVersion"))
            .and_then(Value::as_str)
            .map(str::to_string);
        if let Err(problem) = protocol::read_initialize(object.get("params")) {
            let answer = jsonrpc::error_response(&id, jsonrpc::INVALID_PARAMS, &problem, None);
            return self.answer_locally(&id, "initialize_refused", answer);
        }
        let answer = jsonrpc::result_response(&id, protocol::initialize_result(asked.as_deref()));
        self.answer_locally(&id, "initialize", answer);
        if self.handshake.is_none() {
            self.handshake = Some(object);
        }
        if self.connected() && !self.session_has_handshake {
            self.replay_handshake();
        }
    }

    fn on_notification(&mut self, method: &str, mut object: Map<String, Value>) {
        match method {
            "notifications/initialized" => {
                self.initialized_note = Some(object.clone());
                if self.connected() && self.session_has_handshake && !self.session_has_note {
                    self.session_has_note = true;
                    self.forward_uncounted(object, "notification");
                }
            }
            "notifications/cancelled" => {
                let target = object
                    .get("params")
                    .and_then(|p| p.get("requestId"))
                    .cloned()
                    .and_then(|id| self.book.seq_of(&id));
                let epoch = self.epoch();
                if let Some(seq) = target
                    && epoch.is_some()
                    && matches!(self.book.get(seq).map(|c| c.state), Some(CallState::Sent { epoch: e, .. }) if Some(e) == epoch)
                {
                    if let Some(Value::Object(params)) = object.get_mut("params") {
                        params.insert("requestId".into(), json!(seq));
                    }
                    self.forward_uncounted(object, "notification");
                }
            }
            _ => self.forward_uncounted(object, "notification"),
        }
    }

    fn on_stdin_closed(&mut self) {
        let owed = self.book.len();
        self.log.event(
            "mcp_stdin_closed",
            json!({ "owed": owed, "drainMs": self.settings.drain.as_millis() as u64 }),
        );
        if owed == 0 {
            self.exit(ExitCode::SUCCESS, 0);
        } else {
            self.drain_until = Some(Instant::now() + self.settings.drain);
        }
    }

    fn finish_drain(&mut self) {
        self.drain_until = None;
        let owed = self.book.all();
        let mut ids = Vec::new();
        for seq in &owed {
            if let Some(call) = self.book.take(*seq) {
                let sent = matches!(call.state, CallState::Sent { .. });
                let loss = LinkLoss::owed_at_exit(self.port, sent, self.settings.drain);
                ids.push(call.client_id.clone());
                self.emit(loss.answer(&call.client_id, self.port));
            }
        }
        self.log.event(
            "mcp_unanswered_at_exit",
            json!({
                "port": self.port,
                "ids": ids,
                "note": "each was answered -32001 on stdout (delivered only if the agent still reads it)",
                "stdoutBroken": self.stdout_broken.load(Ordering::SeqCst),
            }),
        );
        self.exit(ExitCode::FAILURE, owed.len());
    }

    fn exit(&mut self, code: ExitCode, owed: usize) {
        self.log.event(
            "mcp_proxy_exit",
            json!({ "port": self.port, "owedAtExit": owed, "state": self.link.word() }),
        );
        self.finished = Some(code);
    }

    // ---- the daemon's side ----

    fn on_report(&mut self, report: Report) {
        match report {
            Report::Connected {
                epoch,
                session,
                instance,
                catalogue,
                spawned,
            } => self.on_connected(epoch, session, instance, catalogue, spawned),
            Report::Unreachable {
                attempt,
                presence,
                obstacle,
                definitive,
            } => self.on_unreachable(attempt, &presence, obstacle, definitive),
            Report::Message { epoch, data } => self.on_daemon_message(epoch, &data),
            Report::Retiring { epoch } => {
                if self.epoch() == Some(epoch) {
                    self.retiring = true;
                }
            }
            Report::Dropped {
                epoch,
                reason,
                detail,
            } => {
                if self.epoch() == Some(epoch) {
                    self.on_dropped(&reason, &detail);
                }
            }
            Report::Posting { epoch, seq } => {
                if let Some(call) = self.book.get_mut(seq)
                    && call.state
                        == (CallState::Sent {
                            epoch,
                            posting: false,
                        })
                {
                    call.state = CallState::Sent {
                        epoch,
                        posting: true,
                    };
                }
            }
            Report::PostFailed {
                epoch,
                seq,
                reason,
                reached,
                retryable,
            } => self.on_post_failed(epoch, seq, &reason, reached, retryable),
            Report::Log { event, fields } => self.log.event(&event, fields),
            Report::Beat => {}
        }
    }

    fn on_connected(
        &mut self,
        epoch: u64,
        session: String,
        instance: String,
        catalogue: Option<CatalogueSummary>,
        spawned: Option<u32>,
    ) {
        if self.attempt.map(|a| a.id) != Some(epoch) {
            return;
        }
        self.attempt = None;
        self.retry_at = None;
        let attempts = self.failures + 1;
        self.failures = 0;
        self.retiring = false;
        self.set_link(
            Link::Connected {
                epoch,
                catalogue: catalogue.clone(),
            },
            "stream open",
        );
        self.log.event(
            "mcp_daemon_session",
            json!({ "session": session, "daemonInstance": instance, "spawnedPid": spawned, "catalogue": catalogue }),
        );
        if let Some(outage) = self.outage.take() {
            self.log.event(
                "mcp_connection_lost",
                json!({
                    "stage": "recovered",
                    "reason": outage.reason,
                    "attempts": attempts,
                    "callsLost": outage.calls_lost,
                    "outageMs": outage.since.elapsed().as_millis() as u64,
                }),
            );
        }
        // A different catalogue is announced before anything from the new session.
        if let (Some(before), Some(now)) = (self.last_catalogue.clone(), catalogue.clone())
            && (before.version != now.version || before.hash != now.hash)
        {
            self.emit(jsonrpc::notification("notifications/tools/list_changed"));
            self.log.event(
                "mcp_tools_list_changed",
                json!({ "from": before, "to": now, "note": "told the agent before anything from the new daemon session" }),
            );
            self.tool_cache = None;
        }
        if catalogue.is_some() {
            self.last_catalogue = catalogue;
        }
        self.session_has_handshake = false;
        self.session_has_note = false;
        self.session_ready = true;
        if self.handshake.is_some() {
            // The queue is sent once the daemon has answered the replay.
            self.replay_handshake();
        } else {
            self.send_queued();
        }
    }

    fn on_unreachable(&mut self, attempt: u64, presence: &str, obstacle: String, definitive: bool) {
        let Some(current) = self.attempt.filter(|a| a.id == attempt) else {
            return;
        };
        self.attempt = None;
        self.log.event(
            "mcp_attempt_failed",
            json!({ "attempt": attempt, "spawn": current.spawn, "presence": presence, "obstacle": obstacle, "definitive": definitive }),
        );
        match &mut self.outage {
            Some(outage) => outage.reason = obstacle.clone(),
            None => {
                self.outage = Some(Outage {
                    reason: obstacle.clone(),
                    since: Instant::now(),
                    calls_lost: 0,
                })
            }
        }
        let waiting = !self.book.queued().is_empty();
        if definitive && waiting && !current.spawn {
            // Calls arrived during an attempt that could not start a daemon: a wake decides.
            return self.start_attempt(true);
        }
        if definitive && waiting {
            let loss = LinkLoss::never_sent(self.port, &obstacle, None);
            for seq in self.book.queued() {
                self.answer_unsent(seq, &loss);
            }
        }
        let waiting = !self.book.queued().is_empty();
        if presence == "free" && !current.spawn && waiting {
            // A request arrived during an attempt that was not allowed to start a daemon.
            return self.start_attempt(true);
        }
        if presence == "free" && !waiting {
            return self.go_dormant(
                "the port is free and no call is waiting; the next call starts a daemon",
            );
        }
        self.failures += 1;
        if self.failures > self.settings.reconnect_attempts {
            self.log.event(
                "mcp_connection_lost",
                json!({
                    "stage": "budget_spent",
                    "reason": obstacle,
                    "attempts": self.failures,
                    "callsLost": 0,
                }),
            );
            self.failures = 0;
            return self.go_dormant("reconnect budget spent; the next call tries again");
        }
        self.set_link(Link::Reconnecting, &obstacle);
        self.retry_at = Some(Instant::now() + settings::backoff(self.failures));
    }

    fn on_dropped(&mut self, reason: &str, detail: &str) {
        let Some(epoch) = self.epoch() else { return };
        let reason = if self.retiring {
            "daemon_shutdown"
        } else {
            reason
        };
        let loss = LinkLoss::in_flight(self.port, reason, detail);
        let mut lost = Vec::new();
        let mut unsent = Vec::new();
        for seq in self.book.sent_on(epoch) {
            let posting = matches!(
                self.book.get(seq).map(|c| c.state),
                Some(CallState::Sent { posting: true, .. })
            );
            if posting {
                if let Some(call) = self.book.take(seq) {
                    let answer = loss.answer(&call.client_id, self.port);
                    self.answer_call(&call, "in_flight_lost", answer);
                    lost.push(seq);
                }
            } else if let Some(call) = self.book.get_mut(seq) {
                // It never left for the daemon: it did not run, and goes on the next session
                // (within the deadline it got on arrival, so no fault can keep it waiting longer).
                call.state = CallState::Queued;
                unsent.push(seq);
            }
        }
        self.log.event(
            "mcp_connection_lost",
            json!({ "stage": "lost", "reason": reason, "detail": detail, "attempts": 0, "callsLost": lost.len(), "requeued": unsent.len() }),
        );
        self.outage = Some(Outage {
            reason: reason.to_string(),
            since: Instant::now(),
            calls_lost: lost.len(),
        });
        self.retiring = false;
        self.failures = 0;
        self.set_link(Link::Reconnecting, reason);
        let waiting = !self.book.queued().is_empty();
        if waiting {
            self.start_attempt(true);
        } else {
            self.retry_at = Some(Instant::now() + settings::backoff(1));
        }
    }

    fn on_post_failed(
        &mut self,
        epoch: u64,
        seq: u64,
        reason: &str,
        reached: Option<bool>,
        retryable: bool,
    ) {
        if self.replays.remove(&seq) {
            // The replayed handshake may never have reached this session, so no call can be sent
            // there: the session is given up like a dropped stream, and a new one opened, where
            // the handshake is replayed again. No call was sent on it since the replay (they wait
            // for its answer), so no call's fate is in doubt here.
            if self.epoch() == Some(epoch) {
                self.log.event(
                    "mcp_replay_failed",
                    json!({ "reason": reason, "reached": reached }),
                );
                self.on_dropped("replay_failed", reason);
            }
            return;
        }
        let Some(call) = self.book.get_mut(seq) else {
            return;
        };
        if !matches!(call.state, CallState::Sent { epoch: e, .. } if e == epoch) {
            return;
        }
        if retryable {
            // It never reached the daemon (no connection, or its session was gone): it waits
            // for the next session, within the deadline it got on arrival.
            call.state = CallState::Queued;
            self.log.event(
                "mcp_call_requeued",
                json!({ "id": call.client_id, "method": call.method, "reason": reason }),
            );
            match self.epoch() {
                Some(current) if current != epoch => self.send_call(seq),
                Some(_) => {}
                None => self.demand(),
            }
            return;
        }
        if let Some(call) = self.book.take(seq) {
            let loss = LinkLoss::post_failed(self.port, reason, reached);
            self.answer_call(
                &call,
                "post_failed",
                loss.answer(&call.client_id, self.port),
            );
        }
    }

    fn on_daemon_message(&mut self, epoch: u64, data: &str) {
        if self.epoch() != Some(epoch) {
            self.log
                .event("mcp_stale_message", json!({ "epoch": epoch }));
            return;
        }
        let Ok(Value::Object(mut object)) = serde_json::from_str::<Value>(data) else {
            self.log
                .event("mcp_daemon_garbage", json!({ "data": truncate(data) }));
            return;
        };
        let is_response = !object.contains_key("method") && object.contains_key("id");
        if !is_response {
            if object.get("method").and_then(Value::as_str)
                == Some("notifications/tools/list_changed")
            {
                self.tool_cache = None;
            }
            return self.emit(Value::Object(object));
        }
        let Some(seq) = object.get("id").and_then(Value::as_u64) else {
            self.log
                .event("mcp_unmatched_answer", json!({ "data": truncate(data) }));
            return;
        };
        if self.replays.remove(&seq) {
            match object.get("error") {
                // The session stays unready: its calls wait, and are answered -32001 (did not
                // run) at their deadline, rather than reach a session that refused the handshake.
                Some(error) => self
                    .log
                    .event("mcp_replay_refused", json!({ "error": error })),
                None => {
                    self.session_ready = true;
                    self.send_queued();
                }
            }
            return;
        }
        let Some(call) = self.book.take(seq) else {
            self.log.event(
                "mcp_late_answer_dropped",
                json!({ "seq": seq, "note": "this call was already answered; it is never answered twice" }),
            );
            return;
        };
        if call.method == "tools/list"
            && let Some(tools) = object
                .get("result")
                .and_then(|r| r.get("tools"))
                .filter(|t| t.is_array())
            && let Link::Connected {
                catalogue: Some(catalogue),
                ..
            } = &self.link
        {
            self.tool_cache = Some((catalogue.clone(), tools.clone()));
        }
        object.insert("id".into(), call.client_id);
        self.emit(Value::Object(object));
    }

    fn on_worker_gone(&mut self, status: String) {
        let Some(worker) = self.worker.take() else {
            return;
        };
        let lived = worker.started.elapsed();
        self.worker_failures = if lived < Duration::from_secs(1) {
            self.worker_failures + 1
        } else {
            0
        };
        self.log.event(
            "mcp_link_process_exited",
            json!({ "workerPid": worker.pid, "status": status, "livedMs": lived.as_millis() as u64 }),
        );
        if self.connected() {
            self.on_dropped("link_process_died", &status);
        } else if let Some(attempt) = self.attempt {
            self.on_unreachable(
                attempt.id,
                "unknown",
                format!(
                    "the process holding the daemon link died during a connect attempt ({status})"
                ),
                false,
            );
        }
        if self.worker_failures > 0 && self.attempt.is_some() {
            // It keeps dying at once: let the backoff pace the next try.
            self.attempt = None;
            self.retry_at = Some(Instant::now() + settings::backoff(self.worker_failures));
        }
    }

    // ---- actions ----

    fn connected(&self) -> bool {
        matches!(self.link, Link::Connected { .. })
    }

    /// Connected, and the session has answered the replayed handshake.
    fn ready(&self) -> bool {
        self.connected() && self.session_ready
    }

    /// Sends every queued call, in arrival order, on the current session.
    fn send_queued(&mut self) {
        for seq in self.book.queued() {
            self.send_call(seq);
        }
    }

    fn epoch(&self) -> Option<u64> {
        match self.link {
            Link::Connected { epoch, .. } => Some(epoch),
            _ => None,
        }
    }

    fn next_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    fn set_link(&mut self, link: Link, reason: &str) {
        if self.link.word() != link.word() {
            self.log.event(
                "mcp_state",
                json!({ "from": self.link.word(), "to": link.word(), "reason": reason }),
            );
        }
        self.link = link;
    }

    fn go_dormant(&mut self, reason: &str) {
        self.retry_at = None;
        self.set_link(Link::Dormant, reason);
    }

    /// A call is waiting and no session is open: start an attempt now (allowed to start a
    /// daemon) unless one is already under way.
    fn demand(&mut self) {
        if self.connected() {
            return;
        }
        if self.attempt.is_none() {
            self.start_attempt(true);
        }
    }

    fn start_attempt(&mut self, spawn: bool) {
        if self.attempt.is_some() {
            return;
        }
        self.retry_at = None;
        if self.worker.is_none()
            && let Err(err) = self.spawn_worker()
        {
            let id = self.next_seq();
            self.attempt = Some(Attempt { id, spawn });
            return self.on_unreachable(
                id,
                "unknown",
                format!("cannot start the process that holds the daemon link: {err}"),
                true,
            );
        }
        let id = self.next_seq();
        self.attempt = Some(Attempt { id, spawn });
        if self.link == Link::Dormant {
            self.set_link(Link::Reconnecting, "woken by a call");
        }
        self.command(Command::Connect { attempt: id, spawn });
    }

    fn command(&mut self, command: Command) {
        if let Some(worker) = &self.worker {
            let _ = worker.commands.send(command);
        }
    }

    fn send_call(&mut self, seq: u64) {
        let Some(epoch) = self.epoch() else { return };
        let Some(call) = self.book.get_mut(seq) else {
            return;
        };
        call.state = CallState::Sent {
            epoch,
            posting: false,
        };
        let mut object = call.object.clone();
        object.insert("id".into(), json!(seq));
        let body = Value::Object(object).to_string();
        self.command(Command::Post { epoch, seq, body });
    }

    fn replay_handshake(&mut self) {
        let (Some(epoch), Some(handshake)) = (self.epoch(), self.handshake.clone()) else {
            return;
        };
        let seq = self.next_seq();
        let mut object = handshake;
        object.insert("id".into(), json!(seq));
        self.replays.insert(seq);
        self.session_ready = false;
        self.command(Command::Post {
            epoch,
            seq,
            body: Value::Object(object).to_string(),
        });
        self.session_has_handshake = true;
        if let Some(note) = self.initialized_note.clone() {
            self.session_has_note = true;
            self.forward_uncounted(note, "notification");
        }
    }

    /// Forwards a message that needs no answer from the daemon (a notification, or the agent's
    /// answer to a daemon request); dropped (and logged) while no session is open.
    fn forward_uncounted(&mut self, object: Map<String, Value>, what: &str) {
        match self.epoch() {
            Some(epoch) => {
                let seq = self.next_seq();
                self.command(Command::Post {
                    epoch,
                    seq,
                    body: Value::Object(object).to_string(),
                });
            }
            None => self.log.event(
                "mcp_dropped_while_disconnected",
                json!({ "kind": what, "method": object.get("method") }),
            ),
        }
    }

    fn answer_unsent(&mut self, seq: u64, loss: &LinkLoss) {
        let Some(call) = self.book.take(seq) else {
            return;
        };
        if call.method == "tools/list"
            && let Some((tag, tools)) = &self.tool_cache
            && self.last_catalogue.as_ref() == Some(tag)
        {
            let answer = jsonrpc::result_response(&call.client_id, json!({ "tools": tools }));
            return self.answer_call(&call, "catalogue_cache", answer);
        }
        self.answer_call(&call, "never_sent", loss.answer(&call.client_id, self.port));
    }

    fn answer_call(&mut self, call: &Call, how: &str, answer: Value) {
        self.log.event(
            "mcp_answered_by_proxy",
            json!({ "id": call.client_id, "method": call.method, "how": how, "error": answer.get("error") }),
        );
        self.emit(answer);
    }

    fn answer_locally(&mut self, id: &Value, how: &str, answer: Value) {
        self.log.event(
            "mcp_answered_by_proxy",
            json!({ "id": id, "how": how, "error": answer.get("error") }),
        );
        self.in_hand = None;
        self.emit(answer);
    }

    fn emit(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        let _ = self.out.send(line);
        if self.drain_until.is_some() && self.book.is_empty() {
            self.exit(ExitCode::SUCCESS, 0);
        }
    }

    fn spawn_worker(&mut self) -> std::io::Result<()> {
        let exe = std::env::current_exe()?;
        let mut child = tokio::process::Command::new(exe)
            .args(["mcp-worker", "--port", &self.port.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()?;
        let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(std::io::Error::other("the worker's pipes were not set up"));
        };
        self.generation += 1;
        let generation = self.generation;
        let pid = child.id().unwrap_or(0);
        let (commands, mut pending) = mpsc::unbounded_channel::<Command>();
        tokio::spawn(async move {
            while let Some(command) = pending.recv().await {
                let Ok(mut line) = serde_json::to_string(&command) else {
                    continue;
                };
                line.push('\n');
                if stdin.write_all(line.as_bytes()).await.is_err() {
                    return;
                }
            }
        });
        let inputs = self.inputs.clone();
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if let Ok(report) = serde_json::from_str::<Report>(&line) {
                    let _ = inputs.send(Input::Worker { generation, report });
                }
            }
            let status = match child.wait().await {
                Ok(status) => describe_exit(status),
                Err(err) => format!("unknown ({err})"),
            };
            let _ = inputs.send(Input::WorkerGone { generation, status });
        });
        self.log.event(
            "mcp_link_process_started",
            json!({ "workerPid": pid, "generation": generation }),
        );
        self.last_heard = Instant::now();
        self.worker = Some(Worker {
            generation,
            pid,
            commands,
            started: Instant::now(),
        });
        Ok(())
    }

    fn shutdown_worker(&mut self) {
        if let Some(worker) = self.worker.take() {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(worker.pid as i32),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
    }
}

fn describe_exit(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with code {code}"),
        (None, Some(signal)) => {
            let name = nix::sys::signal::Signal::try_from(signal)
                .map(|s| s.as_str().to_string())
                .unwrap_or_else(|_| signal.to_string());
            format!("killed by {name}")
        }
        _ => "ended".into(),
    }
}

fn truncate(text: &str) -> String {
    text.chars().take(200).collect()
}
