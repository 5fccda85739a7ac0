//! `reticle status`: what holds the port, decided by probes (never by the pid file), and how the
//! last daemon on it ended, read from its log; text for a person, `--json` for ours, and a line a
//! script written for the reference Reticle reads.

use std::io::IsTerminal;

use serde::Serialize;

use super::Exit;
use crate::daemon::StateDir;
use crate::daemon::life::{self, LastExit};
use crate::daemon::log::read_tail;
use crate::daemon::state::PortFiles;
use crate::probe::holders::{PortHolder, pid_alive};
use crate::probe::obstacles::{foreign_holder, outbound_holder};
use crate::probe::{PortPresence, probe};
use crate::wire::StatusReport;

/// The status report, as printed with `--json`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusOutput {
    pub port: u16,
    /// `daemon`, `foreign`, `outbound` or `free`.
    pub presence: &'static str,
    /// True only when a Reticle daemon answered `/status`.
    pub running: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub daemon: Option<StatusReport>,
    /// What holds a port that is neither free nor a running daemon's, and the fix.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diagnosis: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub holders: Vec<PortHolder>,
    pub last_exit: LastExit,
    pub log: String,
}

/// Gathers the report for `port`.
pub async fn gather(port: u16) -> StatusOutput {
    let files = StateDir::from_env().port_files(port);
    let presence = probe(port).await;
    let running_instance = match &presence {
        PortPresence::Daemon { status } => Some(status.instance.clone()),
        _ => None,
    };
    let (diagnosis, holders) = match &presence {
        PortPresence::Foreign => {
            let (sentence, holders) = foreign_holder(port, &files);
            (Some(sentence), holders)
        }
        PortPresence::Outbound { connections } => (
            Some(outbound_holder(port, connections)),
            connections.holders.clone(),
        ),
        _ => (None, Vec::new()),
    };
    StatusOutput {
        port,
        presence: presence.word(),
        running: running_instance.is_some(),
        last_exit: last_exit(&files, running_instance.as_deref()),
        daemon: match presence {
            PortPresence::Daemon { status } => Some(*status),
            _ => None,
        },
        diagnosis,
        holders,
        log: files.log.display().to_string(),
    }
}

/// How the most recent ended life on this port ended.
pub fn last_exit(files: &PortFiles, running: Option<&str>) -> LastExit {
    let mut text = read_tail(&files.rolled_log());
    text.push('\n');
    text.push_str(&read_tail(&files.log));
    life::last_exit(
        &life::lives(&text),
        running,
        pid_alive,
        time::OffsetDateTime::now_utc(),
    )
}

/// The event name of the one line a script written for the reference Reticle reads.
pub const SCRIPT_LINE_EVENT: &str = "reticle_status";

/// The report in the shape the reference's `status` line has (`port`, `running`, `presence`,
/// `pid`, `sessionCount`, `sessions[{sessionId, url, title}]`), our fields beside it.
pub fn script_line(report: &StatusOutput) -> String {
    let mut line = serde_json::to_value(report).unwrap_or_default();
    if let Some(daemon) = &report.daemon {
        line["pid"] = serde_json::json!(daemon.pid);
        line["sessionCount"] = serde_json::json!(daemon.session_count);
        line["sessions"] = daemon
            .sessions
            .iter()
            .map(|s| serde_json::json!({ "sessionId": s.id, "url": s.url, "title": s.title }))
            .collect();
    } else {
        line["sessionCount"] = serde_json::json!(0);
        line["sessions"] = serde_json::json!([]);
    }
    format!("{SCRIPT_LINE_EVENT} {line}")
}

/// Prints the report; always exits 0 (it reports, it does not judge). Beside the text, when
/// stderr is not a terminal (a script reads it), one [`script_line`] goes there.
pub async fn status(port: u16, json: bool) -> Result<(), Exit> {
    let report = gather(port).await;
    if !json && !std::io::stderr().is_terminal() {
        eprintln!("{}", script_line(&report));
    }
    if json {
        println!(
            "{}",
            serde_json::to_string(&report).map_err(|e| Exit::failure(e.to_string()))?
        );
        return Ok(());
    }
    match (&report.daemon, &report.diagnosis) {
        (Some(d), _) => println!(
            "Reticle on 127.0.0.1:{port}: running (pid {}, instance {}, version {}, since {}), {} session(s)",
            d.pid, d.instance, d.version, d.started_at, d.session_count
        ),
        (None, Some(diagnosis)) => {
            println!("Reticle on 127.0.0.1:{port}: NOT running: {diagnosis}")
        }
        (None, None) => println!("Reticle on 127.0.0.1:{port}: not running (the port is free)"),
    }
    let exit = &report.last_exit;
    let at = exit
        .at
        .as_deref()
        .map(|t| format!(" at {t}"))
        .unwrap_or_default();
    println!("  last exit: {}{at}: {}", exit.kind, exit.reason);
    if let Some(daemon) = &report.daemon {
        if let Some(workspace) = &daemon.workspace {
            println!("  workspace: {workspace}");
        }
        for session in &daemon.sessions {
            println!(
                "  session {}{}: {} ({}), connected {}, last heard {} ms ago",
                session.id,
                if session.idle { " (idle)" } else { "" },
                session.url,
                session.title,
                session.connected_at,
                session.last_seen_ms
            );
        }
        for page in &daemon.refused {
            let who = page
                .session_id
                .as_deref()
                .or(page.origin.as_deref())
                .unwrap_or("a page");
            let url = page
                .url
                .as_deref()
                .map(|u| format!(" at {u}"))
                .unwrap_or_default();
            println!(
                "  refused {who}{url} at {}: {} ({}): {}",
                page.at, page.kind, page.code, page.reason
            );
        }
    }
    println!("  log: {}", report.log);
    Ok(())
}
