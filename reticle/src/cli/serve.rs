//! `reticle serve`: in the foreground, run a daemon life here; detached, spawn one in its own
//! session and report success only when `/status` answers with that life's instance id
//! ([`ensure`], which `reticle verify` shares, says whether it started one or found one).

use std::time::{Duration, Instant};

use super::Exit;
use crate::assembly;
use crate::config::{self, env};
use crate::daemon::settings::{Settings, instance_from_env};
use crate::daemon::spawn::{SpawnedFor, spawn_detached};
use crate::daemon::{DaemonLog, StateDir, events, runtime};
use crate::http;
use crate::probe::obstacles::{foreign_holder, outbound_holder, start_failure};
use crate::probe::{PortPresence, fetch_status, probe};

const POLL: Duration = Duration::from_millis(5);
const STATUS_BOUND: Duration = Duration::from_millis(250);

/// Runs the daemon in this process, serving the HTTP router, until it ends.
pub async fn foreground(settings: Settings) -> Result<(), Exit> {
    match assembly::run(settings, http::router).await {
        Ok(_) => Ok(()),
        Err(reason) => Err(Exit::failure(reason)),
    }
}

/// What a foreground daemon on `port` needs before its life starts: its settings and runtime.
/// A refusal here happens before the daemon has a log of its own, so it is also written to the
/// log the daemon would have kept: whoever started it (the proxy, `reticle serve`) names that
/// file as the place to look.
pub fn foreground_ready(port: u16) -> Result<(tokio::runtime::Runtime, Settings), Exit> {
    let ready = Settings::from_env(port)
        .map_err(|err| Exit::usage(err.to_string()))
        .and_then(|settings| {
            runtime::build(settings.workers)
                .map(|rt| (rt, settings))
                .map_err(super::runtime_failed)
        });
    ready.inspect_err(|refused| record_start_failure(port, refused))
}

/// Appends the refusal to the log of the daemon on `port`, when the state dir can hold it.
fn record_start_failure(port: u16, refused: &Exit) {
    let state = StateDir::from_env();
    if state.problem().is_some() || state.ensure().is_err() {
        return;
    }
    let files = state.port_files(port);
    let instance = instance_from_env();
    if let Ok(log) = DaemonLog::open(&files.log, files.rolled_log(), &instance) {
        log.event(
            events::START_FAILED,
            serde_json::json!({ "port": port, "reason": refused.message().unwrap_or_default() }),
        );
    }
}

/// Starts a detached daemon and waits for its own `/status` answer.
pub async fn detached(port: u16) -> Result<(), Exit> {
    println!("{}", ensure(port).await?.sentence(port));
    Ok(())
}

/// How [`ensure`] found the port: a daemon already there, or one it started.
pub enum Serving {
    Reused(Box<crate::wire::StatusReport>),
    Started { pid: u32, instance: String },
}

impl Serving {
    /// The line `reticle serve` prints.
    pub fn sentence(&self, port: u16) -> String {
        match self {
            Serving::Reused(status) => format!(
                "a Reticle daemon is already serving 127.0.0.1:{port} (pid {}, instance {}, version {})",
                status.pid, status.instance, status.version
            ),
            Serving::Started { pid, instance } => format!(
                "started Reticle daemon on 127.0.0.1:{port} (pid {pid}, instance {instance})"
            ),
        }
    }
}

/// A daemon answering on `port`: the one there, else one started detached and waited for.
pub async fn ensure(port: u16) -> Result<Serving, Exit> {
    let timeout = config::millis_from_env(env::SERVE_TIMEOUT_MS, config::DEFAULT_SERVE_TIMEOUT)
        .map_err(|err| Exit::usage(err.to_string()))?;
    Settings::from_env(port).map_err(|err| Exit::usage(err.to_string()))?;
    let state = StateDir::from_env();
    let files = state.port_files(port);
    match probe(port).await {
        PortPresence::Daemon { status } => return Ok(Serving::Reused(status)),
        PortPresence::Foreign => return Err(Exit::failure(foreign_holder(port, &files).0)),
        PortPresence::Outbound { connections } => {
            return Err(Exit::failure(outbound_holder(port, &connections)));
        }
        PortPresence::Free => {}
    }
    if let Some(problem) = state.problem() {
        return Err(Exit::failure(problem));
    }
    let instance = uuid::Uuid::new_v4().to_string();
    let mut child = spawn_detached(port, &instance, SpawnedFor::Caller)
        .map_err(|err| Exit::failure(format!("cannot start the daemon process: {err}")))?;
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = fetch_status(port, STATUS_BOUND).await
            && status.instance == instance
        {
            return Ok(Serving::Started {
                pid: status.pid,
                instance,
            });
        }
        if let Ok(Some(code)) = child.try_wait() {
            let reason = start_failure(&files.log, &instance).unwrap_or_else(|| {
                format!(
                    "the daemon exited ({code}) before answering /status; see {}",
                    files.log.display()
                )
            });
            return Err(Exit::failure(reason));
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Exit::failure(format!(
                "the daemon did not answer /status on 127.0.0.1:{port} within {} ms, so it was stopped; raise {} on a slow machine, or see {}",
                timeout.as_millis(),
                env::SERVE_TIMEOUT_MS,
                files.log.display()
            )));
        }
        tokio::time::sleep(POLL).await;
    }
}
