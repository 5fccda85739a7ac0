//! The `/status` report: the one answer that proves a daemon is alive and which one it is.

use serde::{Deserialize, Serialize};

/// The path of the report on every daemon.
pub const STATUS_PATH: &str = "/status";

/// What `GET /status` answers. `instance` is fresh for every daemon life, so a client that
/// started a daemon can tell its own from an older one still answering on the port.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct StatusReport {
    /// Always `true` in an answer: a daemon that answers is running.
    pub running: bool,
    /// The daemon's product version.
    pub version: String,
    /// The daemon's wire contract ([`crate::wire::CONTRACT`]); empty from a daemon older than
    /// this field.
    #[serde(default)]
    pub contract: String,
    /// The id of this daemon life.
    pub instance: String,
    /// The daemon's process id.
    pub pid: u32,
    /// The port it is bound to.
    pub port: u16,
    /// When it started, RFC 3339.
    pub started_at: String,
    /// How many browser sessions are connected.
    pub session_count: usize,
    /// The connected sessions.
    pub sessions: Vec<SessionSummary>,
    /// The most recent pages the bridge refused (oldest first), so a page that cannot connect
    /// is visible here rather than only in its own console.
    #[serde(default)]
    pub refused: Vec<RefusedPage>,
    /// How many MCP client streams (agents, through `reticle mcp`) are attached.
    #[serde(default)]
    pub agent_count: usize,
    /// How many tool calls are running.
    #[serde(default)]
    pub calls_in_flight: usize,
    /// MCP sessions open (streams and Streamable HTTP sessions) and the cap on them
    /// (`RETICLE_MAX_MCP_SESSIONS`): at the cap, a new agent is refused. `None` from a daemon
    /// older than this field.
    #[serde(default)]
    pub mcp_sessions: Option<McpSessions>,
    /// The tool catalogue this daemon serves.
    #[serde(default)]
    pub catalogue: Option<CatalogueSummary>,
    /// The tool layer's call accounting.
    #[serde(default)]
    pub tool_calls: Option<ToolCalls>,
    /// The project workspace root (`<project>/.reticle`) every flow, baseline, run and capsule
    /// is read from and written to.
    #[serde(default)]
    pub workspace: Option<String>,
}

/// Tool calls as the chokepoint accounts them: running now, most at once, started, settled
/// (every started call settles, whatever its exit), refused.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ToolCalls {
    pub in_flight: usize,
    pub peak: usize,
    pub started: u64,
    pub settled: u64,
    pub refused: u64,
}

/// Which tool catalogue a daemon serves: a client that cached tool definitions compares these
/// to know whether its copy still matches.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct CatalogueSummary {
    /// The catalogue's revision.
    pub version: String,
    /// A hash of every advertised tool definition.
    pub hash: String,
    /// How many tools it advertises.
    pub tools: usize,
}

/// One connected browser session as `/status` lists it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SessionSummary {
    pub id: String,
    pub url: String,
    pub title: String,
    pub connected_at: String,
    pub last_seen_ms: u64,
    /// Marked idle by the reaper (no agent activity past the bound); the next command revives it.
    #[serde(default)]
    pub idle: bool,
    /// What the page calls itself, when the bridge listed it under the id its URL asked for
    /// (`__reticle_session`) instead; absent when the two agree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_id: Option<String>,
}

/// A page the bridge turned away, and why.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RefusedPage {
    /// When, RFC 3339.
    pub at: String,
    /// The close code (or HTTP status for a refused upgrade).
    pub code: u16,
    /// A stable word: `version_mismatch`, `auth_failed`, `origin_refused`, ...
    pub kind: String,
    /// The sentence the page was given.
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
}

/// The MCP sessions a daemon holds, against its cap.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct McpSessions {
    pub open: usize,
    pub cap: usize,
}
