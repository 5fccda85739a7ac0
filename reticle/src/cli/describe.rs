//! Shared sentences and facts for the commands: who holds a foreign port, which pid Reticle has on
//! record for it, how to end a process within a bound. Commands print; this module only finds out
//! and, in [`terminate`], signals the one process it is handed (through its pidfd).

use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use super::target::ProcessHandle;
use crate::daemon::lock;
use crate::daemon::state::PortFiles;
use crate::probe::holders::{self, PortHolder, pid_alive};

/// How long SIGTERM gets before SIGKILL, and how long SIGKILL gets.
pub const GRACE: Duration = Duration::from_secs(5);
pub const KILL_GRACE: Duration = Duration::from_secs(2);
const POLL: Duration = Duration::from_millis(20);

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

/// How a termination went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Termination {
    /// Gone after SIGTERM.
    Terminated,
    /// Needed SIGKILL.
    Killed,
    /// Still there after SIGKILL and its bound.
    Survived,
}

/// SIGTERM (and SIGCONT, so a stopped process can act on it), then SIGKILL after [`GRACE`].
/// Done when the pid is gone and nothing listens on `port`.
pub async fn terminate(target: &ProcessHandle, port: u16) -> Termination {
    let pid = target.pid;
    let _ = target.signal(Signal::SIGTERM);
    let _ = target.signal(Signal::SIGCONT);
    if wait_gone(pid, port, GRACE).await {
        return Termination::Terminated;
    }
    let _ = target.signal(Signal::SIGKILL);
    if wait_gone(pid, port, KILL_GRACE).await {
        Termination::Killed
    } else {
        Termination::Survived
    }
}

async fn wait_gone(pid: u32, port: u16, bound: Duration) -> bool {
    let deadline = Instant::now() + bound;
    loop {
        let gone = !pid_alive(pid) && !holders::listeners(port).iter().any(|h| h.pid == pid);
        if gone {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(POLL).await;
    }
}
