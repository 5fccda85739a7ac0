//! What a tool call can reach: the daemon's identity, the bridge, who is calling (the
//! [`LeaseHolder`] a lease is checked against) and the tool layer's own host ([`ToolHost`]):
//! call accounting, the lease book, per-session memory and where it may write.
//!
//! It holds and hands out; it must not run a tool.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::lease_book::{DEFAULT_LEASE_TTL, DEFAULT_LINK_GRACE, LeaseBook, LeaseHolder};
use crate::bridge::{Bridge, Cursor};
use crate::config::env;
use crate::daemon::{Activity, DaemonInfo, DaemonLog};
use crate::store::workspace::{Workspace, Writes};

/// How long the first calls of a daemon life wait for a first page to connect.
pub const DEFAULT_FIRST_SESSION_WAIT: Duration = Duration::from_secs(3);
/// How many action windows a session remembers.
pub const ACTIONS_KEPT: usize = 64;

/// What a tool call can reach.
#[derive(Debug, Clone)]
pub struct ToolContext {
    pub info: Arc<DaemonInfo>,
    pub activity: Activity,
    pub bridge: Bridge,
    pub host: Arc<ToolHost>,
    /// Who is calling: set per call by the MCP endpoint; `None` for a call with no link (it
    /// holds no lease, so it may not drive a leased session).
    pub caller: Option<LeaseHolder>,
    /// The workspace of the calling agent's own project, when its link named one (`reticle mcp`
    /// names the directory it was started in): its calls read and write there, never in the
    /// project the daemon was started for. `None`: the daemon's ([`ToolHost::workspace`]).
    pub project: Option<Workspace>,
    /// Where this call's progress goes, when its client asked (`_meta.progressToken`).
    pub progress: crate::tools::progress::Progress,
}

impl ToolContext {
    /// A context over a fresh bridge with default settings, writing under `dir` (for tests).
    pub fn detached(dir: &std::path::Path) -> Self {
        let activity = Activity::new();
        let bridge = Bridge::new(
            crate::bridge::BridgeConfig::default(),
            None,
            activity.clone(),
            tokio_util::sync::CancellationToken::new(),
            None,
        );
        Self {
            info: Arc::new(DaemonInfo {
                version: crate::VERSION.into(),
                instance: "test".into(),
                pid: std::process::id(),
                port: 4400,
                started_at: crate::daemon::log::now_rfc3339(),
            }),
            activity,
            bridge,
            host: Arc::new(ToolHost::new(
                dir.join("state"),
                dir.join("project"),
                Duration::ZERO,
                None,
            )),
            caller: None,
            project: None,
            progress: Default::default(),
        }
    }

    /// The workspace this call reads and writes: its agent's project's, else the daemon's.
    pub fn workspace(&self) -> &Workspace {
        self.project.as_ref().unwrap_or(&self.host.workspace)
    }

    /// This context for a call from an agent whose project is at `project_dir` (written the
    /// way the daemon's own workspace is); the daemon's workspace when `None`, or when the
    /// daemon was started for one named project ([`ToolHost::project_pinned`]).
    pub fn in_project(&self, project_dir: Option<&std::path::Path>) -> Self {
        let project = project_dir
            .filter(|_| !self.host.project_pinned)
            .map(|dir| self.host.workspace.for_project(dir));
        Self {
            project,
            ..self.clone()
        }
    }

    /// This context for a call whose progress goes to `progress`.
    pub fn reporting_to(&self, progress: crate::tools::progress::Progress) -> Self {
        Self {
            progress,
            ..self.clone()
        }
    }

    /// This context for a call made by `caller`.
    pub fn called_by(&self, caller: LeaseHolder) -> Self {
        Self {
            caller: Some(caller),
            ..self.clone()
        }
    }
}

/// The tool layer's state for one daemon life: call accounting, the lease book, per-session
/// memory (last act, action windows, snapshot baselines, message cursors, recordings) and where
/// it may write: the state dir for the feedback outbox; for flows, runs and capsules the calling
/// agent's project's `.reticle/` when its link names one, else the daemon's.
#[derive(Debug)]
pub struct ToolHost {
    pub stats: ToolStats,
    /// Which sessions are leased, by whom (memory only: a restart loses them).
    pub leases: LeaseBook,
    memory: Mutex<HashMap<String, SessionMemory>>,
    /// The daemon's state dir (the feedback outbox lives here).
    pub state_dir: PathBuf,
    /// The workspace of the project the daemon serves (`<project>/.reticle/`): the root every
    /// reader and writer of flows, baselines, runs and capsules uses, unless the calling
    /// agent's link names its own project ([`ToolContext::workspace`]).
    pub workspace: Workspace,
    /// Whether that project was named for the daemon (`RETICLE_PROJECT_DIR`): then it is every
    /// agent's. Else it is only the directory the daemon was started in (by the first agent's
    /// `reticle mcp`), and an agent naming its own project works in that one.
    pub project_pinned: bool,
    /// When the daemon started.
    pub started: Instant,
    /// How long after start a call waits for a first page instead of refusing.
    pub first_session_wait: Duration,
    /// The daemon log, when there is one.
    pub log: Option<Arc<DaemonLog>>,
    /// The tabs this daemon drives, and the browser it launched.
    pub drives: crate::drive::Drives,
}

impl ToolHost {
    pub fn new(
        state_dir: PathBuf,
        project_dir: PathBuf,
        first_session_wait: Duration,
        log: Option<Arc<DaemonLog>>,
    ) -> Self {
        Self {
            stats: ToolStats::default(),
            leases: LeaseBook::default(),
            memory: Mutex::new(HashMap::new()),
            state_dir,
            workspace: Workspace::of_project(&project_dir),
            project_pinned: false,
            started: Instant::now(),
            first_session_wait,
            log,
            drives: Default::default(),
        }
    }

    /// The host for a daemon life: the project is `RETICLE_PROJECT_DIR`, else the daemon's
    /// working directory (the directory the agent started `reticle mcp` from).
    pub fn from_env(state_dir: PathBuf, log: Option<Arc<DaemonLog>>) -> Result<Self, String> {
        let (project_dir, project_pinned) = match std::env::var(env::PROJECT_DIR) {
            Ok(dir) if !dir.trim().is_empty() => (PathBuf::from(dir), true),
            _ => (
                std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
                false,
            ),
        };
        let wait =
            crate::config::millis_from_env(env::FIRST_SESSION_WAIT_MS, DEFAULT_FIRST_SESSION_WAIT)
                .map_err(|e| e.to_string())?;
        let ttl = crate::config::millis_from_env(env::LEASE_TTL_MS, DEFAULT_LEASE_TTL)
            .map_err(|e| e.to_string())?;
        if ttl.is_zero() {
            return Err(format!(
                "{} must be a positive number of milliseconds",
                env::LEASE_TTL_MS
            ));
        }
        let grace = crate::config::millis_from_env(env::LEASE_LINK_GRACE_MS, DEFAULT_LINK_GRACE)
            .map_err(|e| e.to_string())?;
        let ignores = crate::config::switch_on(env::TEST_STAND_IN_IGNORE_LEASES);
        let host = Self::new(state_dir, project_dir, wait, log);
        let writes = if crate::config::switch_on(env::TEST_STAND_IN_WRITE_IN_PLACE) {
            Writes::InPlaceStandIn
        } else {
            Writes::Atomic
        };
        Ok(Self {
            leases: LeaseBook::new(ttl, grace, ignores),
            workspace: host.workspace.clone().writing(writes),
            project_pinned,
            ..host
        })
    }

    /// Runs `f` on the memory of session `id` (created empty on first use).
    pub fn remember<T>(&self, id: &str, f: impl FnOnce(&mut SessionMemory) -> T) -> T {
        let mut memory = self
            .memory
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if memory.len() > 256 && !memory.contains_key(id) {
            memory.clear();
        }
        f(memory.entry(id.to_string()).or_default())
    }
}

/// What the tool layer remembers about one session id.
#[derive(Debug, Default)]
pub struct SessionMemory {
    /// The last action id handed out (`a<n>`).
    pub actions_issued: u64,
    /// Where the last act (or navigation) began: the default `since` of assert and wait_for.
    pub last_act: Option<Cursor>,
    /// Action windows by id, oldest first.
    pub actions: Vec<(String, ActionWindow)>,
    /// The last snapshot tree per (life, mode, scope), for `diff`.
    pub snapshots: HashMap<String, String>,
    /// Where the last `messages` read stopped.
    pub messages_from: Option<Cursor>,
    /// The recording in progress on this session, if one is.
    pub recording: Option<super::recording::Recording>,
    /// The viewport `reticle_viewport` last set on this (driven) session.
    pub viewport: Option<serde_json::Value>,
}

impl SessionMemory {
    /// Starts an action window at `since`; returns its id.
    pub fn begin_action(&mut self, since: Cursor) -> String {
        self.actions_issued += 1;
        let id = format!("a{}", self.actions_issued);
        self.last_act = Some(since);
        self.actions
            .push((id.clone(), ActionWindow { since, until: None }));
        if self.actions.len() > ACTIONS_KEPT {
            self.actions.remove(0);
        }
        id
    }

    /// Closes an action window at `until`.
    pub fn end_action(&mut self, id: &str, until: Cursor) {
        if let Some((_, w)) = self.actions.iter_mut().find(|(a, _)| a == id) {
            w.until = Some(until);
        }
    }

    pub fn action(&self, id: &str) -> Option<ActionWindow> {
        self.actions.iter().find(|(a, _)| a == id).map(|(_, w)| *w)
    }
}

/// The events of one action: from where it began to where the next one began (open while it
/// is the latest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActionWindow {
    pub since: Cursor,
    pub until: Option<Cursor>,
}

/// Concurrency accounting for tool calls: how many run now, the most at once, how many ran.
#[derive(Debug, Default)]
pub struct ToolStats {
    in_flight: AtomicUsize,
    peak: AtomicUsize,
    started: AtomicU64,
    settled: AtomicU64,
    refused: AtomicU64,
}

/// A snapshot of [`ToolStats`] (reported by `/status` as `toolCalls`).
pub type StatsSummary = crate::wire::status::ToolCalls;

impl ToolStats {
    pub(crate) fn begin(&self) {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now, Ordering::SeqCst);
        self.started.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn end(&self, refused: bool) {
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        self.settled.fetch_add(1, Ordering::Relaxed);
        if refused {
            self.refused.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub fn summary(&self) -> StatsSummary {
        StatsSummary {
            in_flight: self.in_flight.load(Ordering::SeqCst),
            peak: self.peak.load(Ordering::SeqCst),
            started: self.started.load(Ordering::Relaxed),
            settled: self.settled.load(Ordering::Relaxed),
            refused: self.refused.load(Ordering::Relaxed),
        }
    }
}
