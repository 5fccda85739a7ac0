//! Starting a daemon detached: the `reticle` binary (this one, or the one beside `reticle-mcp`),
//! `serve --foreground`, in its own session (so a SIGTERM to the caller's process group cannot
//! reach it), with no inherited stdio. This module
//! starts the process; it must not judge whether the start worked (the caller watches `/status`).

use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

use crate::config::{env, executables};

/// Spawns `reticle serve --foreground --port <port>` for the daemon life `instance`.
pub fn spawn_detached(port: u16, instance: &str) -> io::Result<Child> {
    let exe = executables::main_executable()?;
    let mut command = Command::new(exe);
    command
        .args(["serve", "--foreground", "--port", &port.to_string()])
        .env(env::INSTANCE_ID, instance)
        // The proxy's worker starts daemons too: its ledger is its own.
        .env_remove(env::POSTING_LEDGER_FD)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: setsid is async-signal-safe and touches no memory shared with the parent.
    unsafe {
        command.pre_exec(|| nix::unistd::setsid().map(|_| ()).map_err(io::Error::from));
    }
    command.spawn()
}
