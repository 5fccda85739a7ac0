//! `reticle kill`: end the process LISTENING on the port when it is a Reticle daemon, or any
//! listener with `--force`. Only listeners are candidates: a process that merely holds a client
//! connection to the port (an agent's `reticle mcp`), or a connection whose local end the port
//! is, is never touched (the latter is named, and the command fails: the port stays taken), and
//! the listener is held by pidfd from its check to its signal.

use super::Exit;
use super::describe::{Termination, terminate};
use super::stop::clear_stale_records;
use super::target::{is_reticle_daemon, listener_handle};
use crate::daemon::StateDir;
use crate::probe::holders::listeners;
use crate::probe::holders::outbound;
use crate::probe::obstacles::{outbound_holder, recorded_daemon};
use crate::probe::{PortPresence, probe};

pub async fn kill(port: u16, force: bool) -> Result<(), Exit> {
    let files = StateDir::from_env().port_files(port);
    let Some(listener) = listeners(port).into_iter().next() else {
        clear_stale_records(&files);
        if let Some(connections) = outbound(port) {
            return Err(Exit::failure(format!(
                "nothing is listening on 127.0.0.1:{port} to end, but the port is not free: {}",
                outbound_holder(port, &connections)
            )));
        }
        println!("nothing is listening on 127.0.0.1:{port}");
        return Ok(());
    };
    let answers_as_reticle = matches!(
        probe(port).await,
        PortPresence::Daemon { status } if status.pid == listener.pid
    );
    let is_reticle = (answers_as_reticle || recorded_daemon(&files) == Some(listener.pid))
        && is_reticle_daemon(listener.pid);
    if !is_reticle && !force {
        return Err(Exit::failure(format!(
            "the listener on port {port} is {listener}, which is not a Reticle daemon; run again with --force to end it anyway"
        )));
    }
    let what = if is_reticle {
        "Reticle daemon"
    } else {
        "foreign listener"
    };
    let target = listener_handle(listener.pid, port).map_err(Exit::failure)?;
    match terminate(&target, port).await {
        Termination::Terminated | Termination::Killed => {
            clear_stale_records(&files);
            println!(
                "ended {what} {listener} on 127.0.0.1:{port}; processes holding client connections to the port were left alone"
            );
            Ok(())
        }
        Termination::Survived => Err(Exit::failure(format!(
            "{what} {listener} on port {port} survived SIGTERM and SIGKILL"
        ))),
    }
}
