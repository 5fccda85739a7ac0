//! `reticle stop`: end the Reticle daemon on the port (SIGTERM, then SIGKILL after a bound) and
//! clear stale records; exit 0 only when the port is free. It signals only the port's listener,
//! checked to be a Reticle daemon and held by pidfd ([`super::target`]): whatever pid a `/status`
//! answer or a record names is only a candidate.

use super::Exit;
use super::describe::{Termination, terminate};
use super::target::daemon_handle;
use crate::daemon::StateDir;
use crate::daemon::lock;
use crate::daemon::state::PortFiles;
use crate::probe::holders::{listeners, pid_alive};
use crate::probe::obstacles::{foreign_holder, outbound_holder, recorded_daemon};
use crate::probe::{PortPresence, probe};

/// Stops the daemon on `port`; with `quiet`, a success prints nothing.
pub async fn stop(port: u16, quiet: bool) -> Result<(), Exit> {
    let say = |line: String| {
        if !quiet {
            println!("{line}");
        }
    };
    let files = StateDir::from_env().port_files(port);
    let pid = match probe(port).await {
        PortPresence::Daemon { status } => status.pid,
        PortPresence::Foreign => {
            let recorded = recorded_daemon(&files);
            match listeners(port).first() {
                Some(holder) if Some(holder.pid) == recorded => holder.pid,
                _ => return Err(Exit::failure(foreign_holder(port, &files).0)),
            }
        }
        PortPresence::Outbound { connections } => {
            clear_stale_records(&files);
            return Err(Exit::failure(format!(
                "no Reticle daemon is running on 127.0.0.1:{port}, but the port is not free: {}",
                outbound_holder(port, &connections)
            )));
        }
        PortPresence::Free => {
            clear_stale_records(&files);
            say(format!("no Reticle daemon is running on 127.0.0.1:{port}"));
            return Ok(());
        }
    };
    let daemon = daemon_handle(pid, port).map_err(Exit::failure)?;
    let outcome = terminate(&daemon, port).await;
    clear_stale_records(&files);
    match outcome {
        Termination::Terminated => {
            say(format!(
                "stopped Reticle daemon pid {pid} on 127.0.0.1:{port} (SIGTERM)"
            ));
            Ok(())
        }
        Termination::Killed => {
            say(format!(
                "stopped Reticle daemon pid {pid} on 127.0.0.1:{port} (it ignored SIGTERM for 5 s; SIGKILL)"
            ));
            Ok(())
        }
        Termination::Survived => Err(Exit::failure(format!(
            "Reticle daemon pid {pid} on port {port} survived SIGTERM and SIGKILL; it may be stuck in the kernel (state D)"
        ))),
    }
}

/// Removes a pid file naming a dead process and empties a lock record nobody holds.
pub fn clear_stale_records(files: &PortFiles) {
    if files.recorded_pid().is_some_and(|pid| !pid_alive(pid)) {
        let _ = std::fs::remove_file(&files.pid);
    }
    if lock::recorded_holder(&files.lock).is_some() && !lock::is_held(&files.lock) {
        let _ = crate::store::private::open_read_write(&files.lock).and_then(|f| f.set_len(0));
    }
}
