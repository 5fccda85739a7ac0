//! The process marker: every process the harness starts carries `RETICLE_HARNESS_RUN=<owner
//! pid>-<run id>` in its environment, and so do its descendants (a detached daemon inherits it).
//! The orphan sweep finds marked processes whose owner is gone and ends them. It never looks at
//! ports, and never touches a process whose owner is alive (a test running in parallel).

use std::process::Command;
use std::sync::OnceLock;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::ports::pid_alive;

/// The marker's environment variable.
pub const MARKER_VAR: &str = "RETICLE_HARNESS_RUN";

/// This process's marker value: `<our pid>-<run id>`.
pub fn marker() -> &'static str {
    static VALUE: OnceLock<String> = OnceLock::new();
    VALUE.get_or_init(|| format!("{}-{}", std::process::id(), uuid::Uuid::new_v4()))
}

/// Adds the marker to a command about to be spawned.
pub fn mark(command: &mut Command) -> &mut Command {
    command.env(MARKER_VAR, marker())
}

/// A marked process found in `/proc`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marked {
    pub pid: u32,
    pub owner: u32,
    pub command: String,
}

/// Every marked process except this one, with its owner pid.
pub fn marked_processes() -> Vec<Marked> {
    let me = std::process::id();
    let Ok(processes) = procfs::process::all_processes() else {
        return Vec::new();
    };
    processes
        .flatten()
        .filter(|p| p.pid as u32 != me)
        .filter_map(|p| {
            let environ = p.environ().ok()?;
            let value = environ.get(std::ffi::OsStr::new(MARKER_VAR))?;
            let owner = value.to_str()?.split('-').next()?.parse().ok()?;
            Some(Marked {
                pid: p.pid as u32,
                owner,
                command: crate::ports::command_of(p.pid as u32),
            })
        })
        .collect()
}

/// Ends (SIGKILL) every process listening on `port` that carries this process's marker (daemons
/// a test's `reticle mcp` started); never touches anything else. Returns the pids it ended.
pub fn end_marked_listeners(port: u16) -> Vec<u32> {
    let mine: Vec<u32> = marked_processes()
        .into_iter()
        .filter(|m| m.owner == std::process::id())
        .map(|m| m.pid)
        .collect();
    let ended: Vec<u32> = crate::ports::listeners(port)
        .into_iter()
        .map(|h| h.pid)
        .filter(|pid| mine.contains(pid))
        .collect();
    for pid in &ended {
        let _ = kill(Pid::from_raw(*pid as i32), Signal::SIGKILL);
    }
    ended
}

/// Ends (SIGKILL) every marked process whose owner is no longer alive; returns what it ended.
pub fn sweep_orphans() -> Vec<Marked> {
    let orphans: Vec<Marked> = marked_processes()
        .into_iter()
        .filter(|m| !pid_alive(m.owner))
        .collect();
    for orphan in &orphans {
        let _ = kill(Pid::from_raw(orphan.pid as i32), Signal::SIGKILL);
    }
    orphans
}
