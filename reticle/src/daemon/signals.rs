//! The signals that end a daemon life (SIGTERM, SIGINT) or are logged and ignored (SIGHUP).
//! They are installed before the port is bound, so a stop that arrives once `/status` answers
//! finds the handler, never the default action that would kill the daemon without its exit line.
//! This module names the signal; it must not shut anything down.

use serde_json::json;
use tokio::signal::unix::{Signal, SignalKind, signal};

use super::{DaemonLog, events};

/// The daemon's installed signal handlers.
pub struct TerminatingSignals {
    term: Signal,
    int: Signal,
    hup: Signal,
}

impl TerminatingSignals {
    /// Installs the three handlers; an error means the daemon must not start.
    pub fn install() -> std::io::Result<Self> {
        Ok(Self {
            term: signal(SignalKind::terminate())?,
            int: signal(SignalKind::interrupt())?,
            hup: signal(SignalKind::hangup())?,
        })
    }

    /// Resolves with the name of the first SIGTERM or SIGINT; SIGHUP is logged and ignored.
    pub async fn next(&mut self, log: &DaemonLog) -> &'static str {
        loop {
            let name = tokio::select! {
                _ = self.term.recv() => "SIGTERM",
                _ = self.int.recv() => "SIGINT",
                _ = self.hup.recv() => {
                    log.event(events::SIGNALLED, json!({ "signal": "SIGHUP", "action": "ignored" }));
                    continue;
                }
            };
            log.event(
                events::SIGNALLED,
                json!({ "signal": name, "action": "shutting down" }),
            );
            return name;
        }
    }
}
