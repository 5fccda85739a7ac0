//! Starting a daemon detached: the `reticle` binary (this one, or the one beside `reticle-mcp`),
//! `serve --foreground`, in its own session (so a SIGTERM to the caller's process group cannot
//! reach it), with no inherited stdio. This module
//! starts the process; it must not judge whether the start worked (the caller watches `/status`).

use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

use crate::config::{env, executables};

/// Whose project a spawned daemon serves by default.
#[derive(Debug, Clone, Copy)]
pub enum SpawnedFor<'a> {
    /// The caller's, as its environment says (`reticle serve`, `reticle verify`): a
    /// `RETICLE_PROJECT_DIR` there names the one project every agent of the daemon uses.
    Caller,
    /// Agents of any project (`reticle mcp`): the daemon starts in this first agent's project,
    /// which stays its default only; every agent's link names its own.
    Agents {
        first_project: Option<&'a std::path::Path>,
    },
}

/// Spawns `reticle serve --foreground --port <port>` for the daemon life `instance`.
pub fn spawn_detached(port: u16, instance: &str, spawned_for: SpawnedFor<'_>) -> io::Result<Child> {
    let exe = executables::main_executable()?;
    let mut command = Command::new(exe);
    command
        .args(["serve", "--foreground", "--port", &port.to_string()])
        .env(env::INSTANCE_ID, instance)
        // The proxy's worker starts daemons too: its ledger is its own.
        .env_remove(env::POSTING_LEDGER_FD)
        // An agent's --drive is asked per stream, never of the daemon as a whole.
        .env_remove(env::DRIVE_URL)
        .env_remove(env::DRIVE_HEADED)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let SpawnedFor::Agents { first_project } = spawned_for {
        command.env_remove(env::PROJECT_DIR);
        if let Some(dir) = first_project {
            command.current_dir(dir);
        }
    }
    // SAFETY: setsid is async-signal-safe and touches no memory shared with the parent.
    unsafe {
        command.pre_exec(|| nix::unistd::setsid().map(|_| ()).map_err(io::Error::from));
    }
    command.spawn()
}
