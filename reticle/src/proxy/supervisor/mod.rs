//! The supervisor, `reticle mcp`: owns the agent's stdio and every promise made on it, and holds no
//! socket, so nothing done to the daemon's port can reach it; the daemon link lives in a worker it
//! (re)starts over pipes ([`crate::proxy::link`]). It never exits for a lost daemon or a spent
//! budget. This module is the actor: its inputs, loop, timers and panic guard; the replay state is
//! [`crate::proxy::replay`]'s and the owed calls [`crate::proxy::calls`]'.

// What the agent sends; the drain and exit.
mod agent;
// The catalogue last seen and the cached `tools/list`.
mod catalogue;
// The link's states, connect attempts, sessions opening and dropping.
mod connection;
// What the worker reports, and its death.
mod daemon;
// What the agent's host hears (MCP logging): its level and the messages.
mod host;
// The proxy log.
mod log;
// Calls and the replayed handshake to the daemon, answers to the agent.
mod outbound;
// The agent's stdin and stdout threads.
mod stdio;
// The worker process: started, commanded, watched, replaced.
mod workers;

#[cfg(test)]
mod tests;

use std::panic::AssertUnwindSafe;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::Instant;

use self::catalogue::Catalogue;
use self::connection::{Connection, LinkState};
use self::host::HostLog;
use self::log::ProxyLog;
use self::stdio::AgentOut;
use self::workers::{ProcessLauncher, Workers};
use super::boot::boot;
use super::calls::{Book, LinkLoss};
use super::events;
use super::lines::Line;
use super::link::Report;
use super::replay::HandshakeReplay;
use super::settings::{MAX_LINE_BYTES, Settings};
use crate::mcp::jsonrpc::{self, INTERNAL_ERROR, INVALID_REQUEST};

/// Everything the actor reacts to.
#[derive(Debug)]
enum Input {
    Stdin(Line),
    StdinClosed,
    Worker { generation: u64, report: Report },
    WorkerGone { generation: u64, status: String },
}

/// Runs `reticle mcp` until stdin closes and what is owed is answered or logged.
pub fn run(port: u16) -> ExitCode {
    let (settings, runtime) = match boot("reticle mcp", port) {
        Ok(booted) => booted,
        Err(code) => return code,
    };
    // A panic is caught where it happens (see `guarded`); say so in one line on stderr (which
    // an MCP client keeps as the server's log) instead of a backtrace.
    std::panic::set_hook(Box::new(|info| {
        crate::proxy::stderr::say(format_args!(
            "reticle mcp: internal error caught, still serving: {info}"
        ));
    }));
    runtime.block_on(async move {
        let (inputs_tx, inputs) = mpsc::unbounded_channel();
        let out = stdio::start(inputs_tx.clone());
        let supervisor = Supervisor::new(
            settings,
            ProxyLog::open(port),
            out,
            Workers::new(Box::new(ProcessLauncher { port }), inputs_tx),
        );
        supervisor.serve(inputs).await
    })
}

/// The one actor: stdin lines, worker reports and timers arrive as [`Input`]s and are handled
/// synchronously, one at a time, inside a panic guard. States: `connecting` → `connected` ⇄
/// `reconnecting` (capped, jittered backoff) → `dormant` (woken by the next request, which may
/// start a daemon) → `draining` once stdin closes. Every request is answered by the daemon, by
/// the proxy itself (`initialize`, `ping` while disconnected, a matching catalogue, garbage), or
/// with -32001. It mints one agent id at start and names it on every stream its workers open,
/// so the daemon sees one agent (one lease holder) for the life of this process.
struct Supervisor {
    /// This process's agent id, named on every stream.
    agent: String,
    settings: Settings,
    port: u16,
    log: ProxyLog,
    out: AgentOut,
    workers: Workers,
    link: Connection,
    /// Every call owed an answer.
    book: Book,
    next_seq: u64,
    replay: HandshakeReplay,
    catalogue: Catalogue,
    /// What the agent's host asked to hear, and what it was last told about.
    host: HostLog,
    /// The request being handled, so a panic can still answer it.
    in_hand: Option<(Value, Option<u64>)>,
    drain_until: Option<Instant>,
    finished: Option<ExitCode>,
}

impl Supervisor {
    fn new(settings: Settings, log: ProxyLog, out: AgentOut, workers: Workers) -> Self {
        Self {
            agent: uuid::Uuid::new_v4().simple().to_string(),
            port: settings.port,
            settings,
            log,
            out,
            workers,
            link: Connection::new(),
            book: Book::default(),
            next_seq: 1,
            replay: HandshakeReplay::default(),
            catalogue: Catalogue::default(),
            host: HostLog::default(),
            in_hand: None,
            drain_until: None,
            finished: None,
        }
    }

    /// The actor's loop: until it decides to exit, then stops the worker.
    async fn serve(mut self, mut inputs: mpsc::UnboundedReceiver<Input>) -> ExitCode {
        self.log.event(
            events::PROXY_START,
            json!({
                "port": self.port,
                "agent": self.agent,
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
                self.workers.stop();
                return code;
            }
            let wake = self.next_wake();
            let input = tokio::select! {
                input = inputs.recv() => input,
                _ = tokio::time::sleep_until(wake) => None,
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
                events::PROXY_PANIC,
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
        for at in [
            self.link.retry_at,
            self.book.next_deadline(),
            self.drain_until,
        ]
        .into_iter()
        .flatten()
        {
            wake = wake.min(at);
        }
        wake.max(now)
    }

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
                if self.workers.heard_from(generation) {
                    self.on_report(report);
                }
            }
            Input::WorkerGone { generation, status } => {
                if self.workers.is_current(generation) {
                    self.on_worker_gone(status);
                }
            }
        }
    }

    /// The timers: a due reconnect, calls past their deadline, a silent worker, the drain's end.
    fn tick(&mut self) {
        let now = Instant::now();
        if self.link.retry_at.is_some_and(|at| at <= now) && self.attempt_id().is_none() {
            self.link.retry_at = None;
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
            let obstacle = match self.link.outage_reason() {
                Some(reason) => reason.to_string(),
                None if self.connected() => {
                    "the daemon session never confirmed the replayed handshake".into()
                }
                None => "no daemon session opened in time".into(),
            };
            let loss = LinkLoss::never_sent(self.port, &obstacle, Some(self.settings.queue_wait));
            self.log.event(
                events::QUEUE_EXPIRED,
                json!({ "port": self.port, "calls": expired.len(), "state": self.link.state.word(), "reason": obstacle }),
            );
            for seq in expired {
                self.answer_unsent(seq, &loss);
            }
        }
        self.workers.kill_if_silent(&self.log);
        if self.drain_until.is_some_and(|at| at <= now) {
            self.finish_drain();
        }
    }
}
