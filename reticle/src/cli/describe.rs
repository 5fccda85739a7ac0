//! How the commands end a process within a bound: [`terminate`] signals the one process it is handed
//! (through its pidfd) and waits for it and its listener to be gone. Who holds a port, and which pid Reticle has on
//! record for it, are found out in [`crate::probe::obstacles`]; commands print.

use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use super::target::ProcessHandle;
use crate::probe::holders::{self, pid_alive};

/// How long SIGTERM gets before SIGKILL, and how long SIGKILL gets.
pub const GRACE: Duration = Duration::from_secs(5);
pub const KILL_GRACE: Duration = Duration::from_secs(2);
const POLL: Duration = Duration::from_millis(20);

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
