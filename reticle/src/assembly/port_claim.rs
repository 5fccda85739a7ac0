//! Claiming a daemon's port: the lock first, then the bind, which waits out a killed process's
//! sockets the kernel is still tearing down; what a crashed predecessor left behind is logged.
//! Each failure is a sentence naming the obstacle; this module must not start any room.

use std::net::SocketAddr;

use serde_json::json;
use tokio::net::TcpListener;

use crate::daemon::life::{self, LifeEnd};
use crate::daemon::lock::{LockError, LockHolder, PortLock};
use crate::daemon::log::read_tail;
use crate::daemon::{DaemonLog, PortFiles, events};
use crate::probe::holders::pid_alive;
use crate::probe::obstacles;
use crate::probe::{PORT_SETTLE, PORT_SETTLE_POLL, no_live_holder};

/// Takes the port lock for `me`, logging what a predecessor left behind; `Err` is the sentence
/// naming who holds the port, or why the lock could not be taken.
pub fn take_lock(
    log: &DaemonLog,
    port: u16,
    files: &PortFiles,
    me: &LockHolder,
) -> Result<PortLock, String> {
    match PortLock::acquire(&files.lock, me) {
        Ok(acquired) => {
            note_predecessors(log, files, acquired.previous.as_ref());
            Ok(acquired.lock)
        }
        Err(LockError::Held(holder)) => {
            let who = holder.map_or_else(
                || "another Reticle daemon".to_string(),
                |h| {
                    format!(
                        "Reticle daemon pid {} (instance {}, started {})",
                        h.pid, h.instance, h.started_at
                    )
                },
            );
            Err(format!(
                "port {port} is already owned by {who}; stop it with `reticle stop --port {port}` or choose another port with --port"
            ))
        }
        Err(err) => Err(err.to_string()),
    }
}

/// Logs what a crashed or killed predecessor left behind. Never fatal.
fn note_predecessors(log: &DaemonLog, files: &PortFiles, lock_holder: Option<&LockHolder>) {
    let me = std::process::id();
    if let Some(prev) = lock_holder.filter(|h| h.pid != me) {
        log.event(
            events::STALE_LOCK,
            json!({ "previousPid": prev.pid, "previousInstance": prev.instance, "note": "the previous holder ended without releasing its record; the kernel had already freed the lock" }),
        );
    }
    if let Some(pid) = files.recorded_pid().filter(|pid| *pid != me) {
        let state = if pid_alive(pid) {
            "alive but not holding the port lock"
        } else {
            "dead"
        };
        log.event(
            events::STALE_PID,
            json!({ "previousPid": pid, "state": state }),
        );
    }
    let tail = read_tail(&files.log);
    let lives = life::lives(&tail);
    if let Some(prev) = lives
        .iter()
        .rev()
        .find(|l| l.ran() && l.instance != log.instance())
        && prev.end(pid_alive) == LifeEnd::DiedSilently
    {
        let heard = prev.last_beat.unwrap_or(prev.last_seen);
        log.event(
            events::PREVIOUS_DIED_UNCLEAN,
            json!({
                "previousPid": prev.pid,
                "previousInstance": prev.instance,
                "lastHeard": heard.format(&time::format_description::well_known::Rfc3339).ok(),
            }),
        );
    }
}

/// Binds the daemon's listener. A port held only by sockets no live process owns (a killed
/// daemon's, which the kernel is still tearing down) is tried again for [`PORT_SETTLE`]; a port a
/// live process holds fails at once. `Err` is the sentence naming the obstacle.
pub async fn bind(addr: SocketAddr) -> Result<TcpListener, String> {
    bind_when_settled(addr)
        .await
        .map_err(|err| bind_obstacle(addr.port(), &err))
}

async fn bind_when_settled(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let settle_until = tokio::time::Instant::now() + PORT_SETTLE;
    loop {
        match TcpListener::bind(addr).await {
            Err(err)
                if err.kind() == std::io::ErrorKind::AddrInUse
                    && tokio::time::Instant::now() < settle_until
                    && no_live_holder(addr.port()) =>
            {
                tokio::time::sleep(PORT_SETTLE_POLL).await;
            }
            bound => return bound,
        }
    }
}

/// A sentence naming why the port could not be bound, and who holds it when the OS says.
fn bind_obstacle(port: u16, err: &std::io::Error) -> String {
    if err.kind() != std::io::ErrorKind::AddrInUse {
        return format!("cannot bind 127.0.0.1:{port}: {err}");
    }
    obstacles::bind_taken(port)
}
