//! `reticle doctor`: name every obstacle to running Reticle on a port, each with its fix, and
//! every hazard (a port inside the kernel's ephemeral range) as a warning; exit 0 only when there
//! is no obstacle. It inspects; it changes nothing. This file holds the daemon's own checks
//! (state dir, port, version, pid file, lock, range).

// What runs around the daemon: `reticle mcp` reached, Chromium, the project's wiring, workspace.
mod project;

use std::path::Path;

use serde::Serialize;

use super::Exit;
use crate::daemon::StateDir;
use crate::daemon::lock;
use crate::probe::holders::pid_alive;
use crate::probe::obstacles::{ephemeral_hazard, foreign_holder, outbound_holder};
use crate::probe::{PortPresence, probe};

/// One finding.
#[derive(Debug, Serialize)]
pub struct Finding {
    pub check: &'static str,
    pub ok: bool,
    /// Not an obstacle today, but one waiting to happen (`ok` stays true).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub warning: bool,
    pub detail: String,
}

pub async fn doctor(port: u16, dir: &Path, json: bool) -> Result<(), Exit> {
    let state = StateDir::from_env();
    let files = state.port_files(port);
    let mut findings = Vec::new();
    let mut add = |check, ok, detail: String| {
        findings.push(Finding {
            check,
            ok,
            warning: false,
            detail,
        })
    };

    match state.problem() {
        None => add(
            "state dir",
            true,
            format!("{} is writable", state.root().display()),
        ),
        Some(problem) => add("state dir", false, problem),
    }
    let presence = probe(port).await;
    match &presence {
        PortPresence::Daemon { status } if status.version != crate::VERSION => add(
            "version",
            false,
            format!(
                "the daemon on port {port} runs version {} but this reticle is {}; `reticle restart --port {port}` replaces it",
                status.version,
                crate::VERSION
            ),
        ),
        PortPresence::Daemon { status } => {
            add(
                "port",
                true,
                format!(
                    "Reticle daemon pid {} (version {}) answers on 127.0.0.1:{port}",
                    status.pid, status.version
                ),
            );
            if let Some(sessions) = status.mcp_sessions
                && sessions.open >= sessions.cap
            {
                add(
                    "MCP sessions",
                    false,
                    format!(
                        "the daemon holds {} MCP sessions, its cap, so a new agent is refused until one ends; end an MCP client you no longer use, or restart the daemon with a higher {} (`reticle restart --port {port}`)",
                        sessions.open,
                        crate::config::env::MAX_MCP_SESSIONS
                    ),
                );
            }
        }
        PortPresence::Foreign => add("port", false, foreign_holder(port, &files).0),
        PortPresence::Outbound { connections } => {
            add("port", false, outbound_holder(port, connections))
        }
        PortPresence::Free => add(
            "port",
            true,
            format!(
                "127.0.0.1:{port} is free; `reticle serve` or an agent's `reticle mcp` starts a daemon there"
            ),
        ),
    }
    let answering_pid = match &presence {
        PortPresence::Daemon { status } => Some(status.pid),
        _ => None,
    };
    match files.recorded_pid() {
        Some(pid) if !pid_alive(pid) => add(
            "pid file",
            false,
            format!(
                "{} names pid {pid}, which is gone (a daemon that crashed or was killed); `reticle stop --port {port}` clears it",
                files.pid.display()
            ),
        ),
        Some(pid) if answering_pid != Some(pid) && !matches!(presence, PortPresence::Foreign) => {
            add(
                "pid file",
                false,
                format!(
                    "{} names pid {pid}, which is alive but is not the daemon answering on port {port}; `reticle stop --port {port}` clears the record",
                    files.pid.display()
                ),
            )
        }
        _ => add("pid file", true, "no stale pid record".to_string()),
    }
    match lock::recorded_holder(&files.lock) {
        Some(holder) if !lock::is_held(&files.lock) => add(
            "lock",
            false,
            format!(
                "{} records pid {} (instance {}) but nobody holds it: that daemon ended without releasing it; `reticle stop --port {port}` clears it",
                files.lock.display(),
                holder.pid,
                holder.instance
            ),
        ),
        _ => add("lock", true, "no stale lock record".to_string()),
    }
    if let Some(hazard) = ephemeral_hazard(port) {
        findings.push(Finding {
            check: "range",
            ok: true,
            warning: true,
            detail: hazard,
        });
    }
    findings.extend(project::findings(dir, port));

    let obstacles = findings.iter().filter(|f| !f.ok).count();
    if json {
        let body = serde_json::json!({ "port": port, "ok": obstacles == 0, "findings": findings });
        println!("{body}");
    } else {
        println!("reticle doctor for 127.0.0.1:{port}");
        for f in &findings {
            println!(
                "  {} {:<9} {}",
                match (f.ok, f.warning) {
                    (false, _) => "BAD",
                    (true, true) => "!! ",
                    (true, false) => "ok ",
                },
                f.check,
                f.detail
            );
        }
        println!(
            "{}",
            if obstacles == 0 {
                "nothing is wrong".to_string()
            } else {
                format!("{obstacles} obstacle(s) found")
            }
        );
    }
    if obstacles == 0 {
        Ok(())
    } else {
        Err(Exit::silent_failure())
    }
}
