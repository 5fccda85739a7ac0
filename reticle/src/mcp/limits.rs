//! The MCP endpoint's caps, read once at start: open sessions (one per stream) and tool calls
//! running at once; and, beside them, how long a POST waits for an answer it asked to carry
//! ([`super::inline`]). Each refusal names its cap and the variable that raises it. The defaults
//! and variable names live in [`crate::config`]; this module reads and words them, it must not
//! refuse on its own.

use std::time::Duration;

use crate::config::{self, ConfigError, env};

/// The caps in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McpLimits {
    pub sessions: usize,
    pub calls: usize,
    /// How long a POST that asked for its answer inline waits for it (zero: never inline).
    pub inline_wait: Duration,
}

impl Default for McpLimits {
    fn default() -> Self {
        Self {
            sessions: config::DEFAULT_MAX_MCP_SESSIONS as usize,
            calls: config::DEFAULT_MAX_MCP_CALLS as usize,
            inline_wait: config::DEFAULT_MCP_INLINE_WAIT,
        }
    }
}

impl McpLimits {
    pub fn from_env() -> Result<Self, ConfigError> {
        Ok(Self {
            sessions: config::count_from_env(
                env::MAX_MCP_SESSIONS,
                config::DEFAULT_MAX_MCP_SESSIONS,
            )? as usize,
            calls: config::count_from_env(env::MAX_MCP_CALLS, config::DEFAULT_MAX_MCP_CALLS)?
                as usize,
            inline_wait: config::millis_from_env(
                env::MCP_INLINE_WAIT_MS,
                config::DEFAULT_MCP_INLINE_WAIT,
            )?,
        })
    }

    /// The refusal of a stream past the session cap.
    pub fn sessions_refusal(&self) -> String {
        format!(
            "too many MCP sessions: this daemon already holds {} open streams, its cap ({}); close an idle client or raise the cap",
            self.sessions,
            env::MAX_MCP_SESSIONS
        )
    }

    /// The refusal of a call past the call cap.
    pub fn calls_refusal(&self) -> String {
        format!(
            "too many tool calls running: this daemon already runs {}, its cap ({}); wait for one to finish or raise the cap",
            self.calls,
            env::MAX_MCP_CALLS
        )
    }
}

/// The refusal of a POST to a session whose stream backlog is full.
pub fn backlog_refusal(session: &str) -> String {
    format!(
        "the stream of MCP session {session} holds {} unread answers, its backlog cap: read the stream before posting more",
        config::MCP_STREAM_BACKLOG
    )
}
