//! What stands between a client and a daemon on a port, in sentences the CLI, the daemon and the
//! proxy all print: what holds a port that does not answer as Reticle (and which pid Reticle has
//! on record for it), which connection holds a port as its local end (and whether the port lies
//! in the kernel's ephemeral range), what a failed bind ran into, and why a daemon this client
//! started did not come up (its `daemon_start_failed` line). Every sentence about a port that
//! something else holds opens with [`held_by`]'s words. Read-only: it must never signal a process.

use super::ephemeral::{describe, ephemeral_range};
use super::holders::{self, OutboundConnections, PortHolder, pid_alive};
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

/// Whether the port's listener is the Reticle daemon on record for it and that process is
/// running, not stopped: a daemon still starting, or slowed by a loaded machine, that has not
/// answered `/status` yet but can (a stopped or foreign holder cannot).
pub fn recorded_daemon_running(port: u16, files: &PortFiles) -> bool {
    let recorded = recorded_daemon(files);
    holders::listeners(port)
        .first()
        .is_some_and(|holder| Some(holder.pid) == recorded && holders::pid_running(holder.pid))
}

/// A sentence naming what holds a port that does not answer as Reticle.
pub fn foreign_holder(port: u16, files: &PortFiles) -> (String, Vec<PortHolder>) {
    let listeners = holders::listeners(port);
    let recorded = recorded_daemon(files);
    let sentence = match listeners.first() {
        Some(holder) if Some(holder.pid) == recorded => format!(
            "{} Reticle daemon {holder}, which is not answering /status: it is stopped (SIGSTOP) or wedged; `reticle stop --port {port}` ends it",
            held_by(port)
        ),
        Some(holder) => format!(
            "{} {holder}, which is not a Reticle daemon; stop that process (`reticle kill --port {port} --force` ends it), or run Reticle on another port with --port",
            held_by(port)
        ),
        None => format!(
            "port {port} accepts connections but no listener is visible to this user, and it does not answer as a Reticle daemon; free it, or run Reticle on another port with --port"
        ),
    };
    (sentence, listeners)
}

/// How every sentence about a port that something else holds opens.
pub fn held_by(port: u16) -> String {
    format!("port {port} is held by")
}

/// Whether `sentence` says that something else holds `port` (a start that lost its port: the
/// harness tries another one).
pub fn says_port_held(port: u16, sentence: &str) -> bool {
    sentence.contains(&held_by(port))
}

/// A sentence naming the connection that holds `port` as its local end, the process holding it
/// when this user can see it, and the fix.
pub fn outbound_holder(port: u16, connections: &OutboundConnections) -> String {
    let peer = connections
        .peers
        .first()
        .map(|peer| format!(" to {peer}"))
        .unwrap_or_default();
    let owner = match connections.holders.first() {
        Some(holder) => format!("{holder}"),
        None => "a process this user cannot see (or by no process: a connection closed on this side lingers in TIME_WAIT for about a minute)".to_string(),
    };
    let range = ephemeral_range();
    let cause = if range.contains(&port) {
        format!(
            "the kernel gave it to that connection as its source port, because {port} lies inside the ephemeral range {}",
            describe(&range)
        )
    } else {
        "that process bound it by number for its connection".to_string()
    };
    format!(
        "{} {owner} as the local end of an outgoing connection{peer}, not by a listener: {cause}; no daemon can bind it while that connection lasts. Run Reticle on another port with --port: a port outside the ephemeral range {} never collides this way",
        held_by(port),
        describe(&range)
    )
}

/// What a failed bind of `port` ran into, from what this user can see: a listener, a connection
/// whose local end it is, or nothing visible.
pub fn bind_taken(port: u16) -> String {
    if let Some(holder) = holders::listeners(port).first() {
        return format!(
            "{} {holder}, which is not a Reticle daemon; stop that process, or run Reticle on another port with --port",
            held_by(port)
        );
    }
    match holders::outbound(port) {
        Some(connections) => outbound_holder(port, &connections),
        None => format!(
            "{} a process this user cannot see; free it, or run Reticle on another port with --port",
            held_by(port)
        ),
    }
}

/// When `port` lies inside the kernel's ephemeral range, a sentence saying so and why it matters.
pub fn ephemeral_hazard(port: u16) -> Option<String> {
    let range = ephemeral_range();
    range.contains(&port).then(|| format!(
        "port {port} lies inside the kernel's ephemeral range {} (/proc/sys/net/ipv4/ip_local_port_range): any outgoing connection on this machine may take it as its source port, and then no daemon can bind it; a port outside that range never collides this way",
        describe(&range)
    ))
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
