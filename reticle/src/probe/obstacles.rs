//! What stands between a client and a daemon on a port, in sentences the CLI and the proxy both
//! print: what holds a port that does not answer as Reticle (and which pid Reticle has on record
//! for it), and why a daemon this client started did not come up (its `daemon_start_failed`
//! line). Read-only: it must never signal a process.

use super::holders::{self, PortHolder, pid_alive};
use crate::daemon::log::read_tail;
use crate::daemon::state::PortFiles;
use crate::daemon::{events, lock};

/// The pid Reticle has on record for this port (lock holder first, then the pid file), if that
/// process is alive and is a `reticle` process.
pub fn recorded_daemon(files: &PortFiles) -> Option<u32> {
    lock::recorded_holder(&files.lock)
        .map(|h| h.pid)
        .into_iter()
        .chain(files.recorded_pid())
        .find(|pid| pid_alive(*pid) && holders::command_of(*pid).contains("reticle"))
}

/// A sentence naming what holds a port that does not answer as Reticle.
pub fn foreign_holder(port: u16, files: &PortFiles) -> (String, Vec<PortHolder>) {
    let listeners = holders::listeners(port);
    let recorded = recorded_daemon(files);
    let sentence = match listeners.first() {
        Some(holder) if Some(holder.pid) == recorded => format!(
            "port {port} is held by Reticle daemon {holder}, which is not answering /status: it is stopped (SIGSTOP) or wedged; `reticle stop --port {port}` ends it"
        ),
        Some(holder) => format!(
            "port {port} is held by {holder}, which is not a Reticle daemon; stop that process (`reticle kill --port {port} --force` ends it), or run Reticle on another port with --port"
        ),
        None => format!(
            "port {port} accepts connections but no listener is visible to this user, and it does not answer as a Reticle daemon; free it, or run Reticle on another port with --port"
        ),
    };
    (sentence, listeners)
}

/// The reason a life logged for failing to start, if it did.
pub fn start_failure(log: &std::path::Path, instance: &str) -> Option<String> {
    read_tail(log).lines().rev().find_map(|line| {
        let value: serde_json::Value = serde_json::from_str(line).ok()?;
        (value["event"] == events::START_FAILED && value["instance"] == instance)
            .then(|| value["reason"].as_str().map(str::to_string))
            .flatten()
    })
}
