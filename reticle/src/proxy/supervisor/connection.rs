//! The link's states and how it moves between them: `connecting` → `connected` ⇄ `reconnecting`
//! (capped, jittered backoff) → `dormant` (woken by the next request, which may start a daemon).
//! It owns connect attempts, the retry timer, the outage being recovered from, and what a session
//! opening or dropping does to the calls it carried. It never exits the proxy, and it must not
//! read the agent's stdin or parse daemon messages.

use serde_json::json;
use tokio::time::Instant;

use super::Supervisor;
use crate::mcp::jsonrpc;
use crate::mcp::logging::Level;
use crate::probe::PresenceKind;
use crate::proxy::calls::{CallState, LinkLoss};
use crate::proxy::events;
use crate::proxy::link::LinkCommand;
use crate::proxy::settings;
use crate::wire::CatalogueSummary;

/// The link's state, as logged and as the agent would describe it.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum LinkState {
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

impl LinkState {
    pub(super) fn word(&self) -> &'static str {
        match self {
            LinkState::Connecting => "connecting",
            LinkState::Connected { .. } => "connected",
            LinkState::Reconnecting => "reconnecting",
            LinkState::Dormant => "dormant",
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

/// Everything about the link to the daemon but the calls on it.
#[derive(Debug)]
pub(super) struct Connection {
    pub(super) state: LinkState,
    attempt: Option<Attempt>,
    /// When the next reconnect attempt starts.
    pub(super) retry_at: Option<Instant>,
    /// Failed attempts since the link was last up.
    failures: u32,
    outage: Option<Outage>,
    /// The daemon announced its shutdown on the current stream.
    pub(super) retiring: bool,
}

impl Connection {
    pub(super) fn new() -> Self {
        Self {
            state: LinkState::Connecting,
            attempt: None,
            retry_at: None,
            failures: 0,
            outage: None,
            retiring: false,
        }
    }

    /// The open session's epoch.
    pub(super) fn epoch(&self) -> Option<u64> {
        match self.state {
            LinkState::Connected { epoch, .. } => Some(epoch),
            _ => None,
        }
    }

    pub(super) fn is_connected(&self) -> bool {
        matches!(self.state, LinkState::Connected { .. })
    }

    /// The catalogue the open session announced.
    pub(super) fn catalogue(&self) -> Option<&CatalogueSummary> {
        match &self.state {
            LinkState::Connected { catalogue, .. } => catalogue.as_ref(),
            _ => None,
        }
    }

    /// Why no session is open, if a link was lost.
    pub(super) fn outage_reason(&self) -> Option<&str> {
        self.outage.as_ref().map(|o| o.reason.as_str())
    }
}

impl Supervisor {
    pub(super) fn connected(&self) -> bool {
        self.link.is_connected()
    }

    /// Connected, and the session has answered the replayed handshake (or needs none).
    pub(super) fn ready(&self) -> bool {
        self.connected() && self.replay.accepts_calls()
    }

    pub(super) fn epoch(&self) -> Option<u64> {
        self.link.epoch()
    }

    fn set_link(&mut self, state: LinkState, reason: &str) {
        if self.link.state.word() != state.word() {
            self.log.event(
                events::STATE,
                json!({ "from": self.link.state.word(), "to": state.word(), "reason": reason }),
            );
        }
        self.link.state = state;
    }

    fn go_dormant(&mut self, reason: &str) {
        self.link.retry_at = None;
        self.set_link(LinkState::Dormant, reason);
    }

    /// A call is waiting and no session is open: start an attempt now (allowed to start a
    /// daemon) unless one is already under way.
    pub(super) fn demand(&mut self) {
        if self.connected() {
            return;
        }
        if self.link.attempt.is_none() {
            self.start_attempt(true);
        }
    }

    pub(super) fn start_attempt(&mut self, spawn: bool) {
        if self.link.attempt.is_some() {
            return;
        }
        self.link.retry_at = None;
        if !self.workers.is_running()
            && let Err(err) = self.workers.start(&self.log)
        {
            let id = self.next_seq();
            self.link.attempt = Some(Attempt { id, spawn });
            return self.on_unreachable(
                id,
                None,
                format!("cannot start the process that holds the daemon link: {err}"),
                true,
            );
        }
        let id = self.next_seq();
        self.link.attempt = Some(Attempt { id, spawn });
        if self.link.state == LinkState::Dormant {
            self.set_link(LinkState::Reconnecting, "woken by a call");
        }
        self.workers.command(LinkCommand::Connect {
            attempt: id,
            spawn,
            agent: self.agent.clone(),
        });
    }

    /// How long to wait before a new worker is started, when the last one died soon after it
    /// started (workers that keep dying at once are paced by the backoff); `None` while a worker
    /// runs or the last one lived. The pause is kept by the retry timer, never by dropping an
    /// attempt a live worker is still working on: that worker would go on and open a session of
    /// its own beside the next attempt's.
    fn worker_respawn_pause(&self) -> Option<std::time::Duration> {
        let quick_deaths = self.workers.quick_deaths();
        (!self.workers.is_running() && quick_deaths > 0).then(|| settings::backoff(quick_deaths))
    }

    /// The current attempt's id, if one is under way.
    pub(super) fn attempt_id(&self) -> Option<u64> {
        self.link.attempt.map(|a| a.id)
    }

    pub(super) fn on_connected(
        &mut self,
        epoch: u64,
        session: String,
        instance: String,
        catalogue: Option<CatalogueSummary>,
        spawned: Option<u32>,
    ) {
        if self.attempt_id() != Some(epoch) {
            return;
        }
        self.link.attempt = None;
        self.link.retry_at = None;
        let attempts = self.link.failures + 1;
        self.link.failures = 0;
        self.link.retiring = false;
        self.set_link(
            LinkState::Connected {
                epoch,
                catalogue: catalogue.clone(),
            },
            "stream open",
        );
        self.log.event(
            events::DAEMON_SESSION,
            json!({ "session": session, "daemonInstance": instance, "spawnedPid": spawned, "catalogue": catalogue }),
        );
        if let Some(outage) = self.link.outage.take() {
            let outage_ms = outage.since.elapsed().as_millis() as u64;
            self.log.event(
                events::CONNECTION_LOST,
                json!({
                    "stage": "recovered",
                    "reason": outage.reason,
                    "attempts": attempts,
                    "callsLost": outage.calls_lost,
                    "outageMs": outage_ms,
                }),
            );
            let port = self.port;
            self.tell_host(
                Level::Notice,
                "link_restored",
                &format!(
                    "Reticle's link to its daemon on port {port} is back after {outage_ms} ms"
                ),
                json!({ "port": port, "outageMs": outage_ms, "attempts": attempts }),
            );
        }
        if let Some(before) = self.host.daemon_seen(&instance) {
            let port = self.port;
            self.tell_host(
                Level::Warning,
                "daemon_restarted",
                &format!(
                    "a new Reticle daemon is serving on port {port}: pages reconnect by themselves, but leases, recordings and waits held by the one before are gone"
                ),
                json!({ "port": port, "instance": instance, "before": before }),
            );
        }
        // A different catalogue is announced before anything from the new session.
        if let Some(before) = self.catalogue.session_opened(catalogue.as_ref()) {
            self.emit(jsonrpc::notification("notifications/tools/list_changed"));
            self.log.event(
                events::TOOLS_LIST_CHANGED,
                json!({ "from": before, "to": catalogue, "note": "told the agent before anything from the new daemon session" }),
            );
            let (from, to) = (
                before.version.clone(),
                catalogue
                    .as_ref()
                    .map(|c| c.version.clone())
                    .unwrap_or_default(),
            );
            self.tell_host(
                Level::Info,
                "catalogue_changed",
                &format!(
                    "Reticle's tool list changed: the daemon now serving has another catalogue (version {from} to {to}); the client lists its tools again"
                ),
                json!({ "why": "another daemon catalogue", "from": before, "to": catalogue }),
            );
        }
        if self.replay.session_opened() {
            // The queue is sent once the daemon has answered the replay.
            self.replay_handshake();
        } else {
            self.send_queued();
        }
    }

    /// A connect attempt failed. `presence`: what the worker found on the port (`None` when it
    /// is not known: the worker could not be started or died during the attempt).
    pub(super) fn on_unreachable(
        &mut self,
        attempt: u64,
        presence: Option<PresenceKind>,
        obstacle: String,
        definitive: bool,
    ) {
        let Some(current) = self.link.attempt.filter(|a| a.id == attempt) else {
            return;
        };
        self.link.attempt = None;
        self.log.event(
            events::ATTEMPT_FAILED,
            json!({ "attempt": attempt, "spawn": current.spawn, "presence": presence.map_or("unknown", PresenceKind::word), "obstacle": obstacle, "definitive": definitive }),
        );
        match &mut self.link.outage {
            Some(outage) => outage.reason = obstacle.clone(),
            None => {
                self.link.outage = Some(Outage {
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
        let free = presence == Some(PresenceKind::Free);
        if free && !current.spawn && waiting {
            // A request arrived during an attempt that was not allowed to start a daemon.
            return self.start_attempt(true);
        }
        if free && !waiting {
            return self.go_dormant(
                "the port is free and no call is waiting; the next call starts a daemon",
            );
        }
        self.link.failures += 1;
        if self.link.failures > self.settings.reconnect_attempts {
            self.log.event(
                events::CONNECTION_LOST,
                json!({
                    "stage": "budget_spent",
                    "reason": obstacle,
                    "attempts": self.link.failures,
                    "callsLost": 0,
                }),
            );
            let (port, attempts) = (self.port, self.link.failures);
            self.tell_host(
                Level::Warning,
                "link_down",
                &format!(
                    "Reticle could not reach its daemon on port {port} after {attempts} attempts ({obstacle}); the next call tries again"
                ),
                json!({ "port": port, "attempts": attempts, "obstacle": obstacle }),
            );
            self.link.failures = 0;
            return self.go_dormant("reconnect budget spent; the next call tries again");
        }
        self.set_link(LinkState::Reconnecting, &obstacle);
        self.link.retry_at = Some(Instant::now() + settings::backoff(self.link.failures));
    }

    /// The open session ended: calls whose POST had left are answered -32001 (they may have
    /// run); the rest never left and wait for the next session.
    pub(super) fn on_dropped(&mut self, reason: &str, detail: &str) {
        let Some(epoch) = self.epoch() else { return };
        self.replay.session_closed();
        let reason = if self.link.retiring {
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
                    self.answer_call(&call, loss.population.as_str(), answer);
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
            events::CONNECTION_LOST,
            json!({ "stage": "lost", "reason": reason, "detail": detail, "attempts": 0, "callsLost": lost.len(), "requeued": unsent.len() }),
        );
        let port = self.port;
        self.tell_host(
            Level::Warning,
            "link_lost",
            &format!(
                "Reticle lost its link to its daemon on port {port} ({reason}); {} call(s) in flight were answered -32001 and {} wait to be sent; reconnecting",
                lost.len(),
                unsent.len()
            ),
            json!({ "port": port, "reason": reason, "callsLost": lost.len(), "requeued": unsent.len() }),
        );
        self.link.outage = Some(Outage {
            reason: reason.to_string(),
            since: Instant::now(),
            calls_lost: lost.len(),
        });
        self.link.retiring = false;
        self.link.failures = 0;
        self.set_link(LinkState::Reconnecting, reason);
        let waiting = !self.book.queued().is_empty();
        match self.worker_respawn_pause() {
            Some(pause) => self.link.retry_at = Some(Instant::now() + pause),
            None if waiting => self.start_attempt(true),
            None => self.link.retry_at = Some(Instant::now() + settings::backoff(1)),
        }
    }
}
