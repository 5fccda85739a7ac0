//! What the proxy tells the agent's host (MCP `logging`): the level the agent set with
//! `logging/setLevel`, and the `notifications/message` lines for what a host should show (the
//! link lost, down and back, a new daemon serving, the catalogue changed and why). Nothing is
//! said before the agent's `initialize` was answered. It must not decide when a link changed.

use serde_json::{Map, Value, json};

use super::Supervisor;
use crate::mcp::jsonrpc::{self, INVALID_PARAMS};
use crate::mcp::logging::{self, Level};

/// What the host has asked to hear.
#[derive(Debug)]
pub(super) struct HostLog {
    level: Level,
    /// The agent's `initialize` has been answered.
    open: bool,
    /// The daemon instance last connected, to tell a new daemon from the same one.
    last_instance: Option<String>,
}

impl Default for HostLog {
    fn default() -> Self {
        Self {
            level: Level::DEFAULT,
            open: false,
            last_instance: None,
        }
    }
}

impl HostLog {
    /// The agent's `initialize` was answered.
    pub(super) fn opened(&mut self) {
        self.open = true;
    }

    /// Whether a message at `level` is one the host asked for.
    pub(super) fn wants(&self, level: Level) -> bool {
        self.open && level >= self.level
    }

    /// A session opened on daemon `instance`: the instance it replaced, when it is another.
    pub(super) fn daemon_seen(&mut self, instance: &str) -> Option<String> {
        let before = self.last_instance.replace(instance.to_string());
        before.filter(|b| b != instance)
    }
}

impl Supervisor {
    /// Answers `logging/setLevel` here: the level governs what this proxy says and relays.
    pub(super) fn on_set_level(&mut self, id: &Value, object: &Map<String, Value>) {
        let answer = match logging::read_set_level(object.get("params")) {
            Ok(level) => {
                self.host.level = level;
                jsonrpc::result_response(id, json!({}))
            }
            Err(reason) => jsonrpc::error_response(id, INVALID_PARAMS, &reason, None),
        };
        self.answer_locally(id, "logging_set_level", answer);
    }

    /// Says `message` to the host at `level` when it asked to hear that level.
    pub(super) fn tell_host(&mut self, level: Level, event: &str, message: &str, details: Value) {
        if self.host.wants(level) {
            self.emit(logging::message(level, event, message, details));
        }
    }
}
