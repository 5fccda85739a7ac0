//! MCP's `logging` capability, shared by the daemon and the proxy: the eight levels (RFC 5424),
//! `logging/setLevel`'s params, and the `notifications/message` a host shows its user (the link
//! lost and back, a daemon restarted, the catalogue changed and why). Each side keeps its own
//! level and decides what to say; this module only says how it is written.

use serde_json::{Value, json};

/// The logger every Reticle message names.
pub const LOGGER: &str = "reticle";

/// A message's severity, least severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl Level {
    /// Every level, least severe first.
    pub const ALL: [Level; 8] = [
        Level::Debug,
        Level::Info,
        Level::Notice,
        Level::Warning,
        Level::Error,
        Level::Critical,
        Level::Alert,
        Level::Emergency,
    ];

    /// Sent until a client sets another: what a host should show, without the detail.
    pub const DEFAULT: Level = Level::Info;

    /// The wire word.
    pub const fn as_str(self) -> &'static str {
        match self {
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Notice => "notice",
            Level::Warning => "warning",
            Level::Error => "error",
            Level::Critical => "critical",
            Level::Alert => "alert",
            Level::Emergency => "emergency",
        }
    }

    fn from_word(word: &str) -> Option<Level> {
        Level::ALL.into_iter().find(|level| level.as_str() == word)
    }
}

/// The level `logging/setLevel` asks for; `Err` says what is wrong (answered -32602).
pub fn read_set_level(params: Option<&Value>) -> Result<Level, String> {
    let words: Vec<&str> = Level::ALL.iter().map(|l| l.as_str()).collect();
    let asked = params.and_then(|p| p.get("level")).and_then(Value::as_str);
    asked.and_then(Level::from_word).ok_or_else(|| {
        format!(
            "logging/setLevel needs params {{\"level\": <one of {}>}}",
            words.join(", ")
        )
    })
}

/// `notifications/message` at `level`: `event` names what happened (a stable word a host can
/// match), `message` says it to a person, `details` (an object) adds the facts.
pub fn message(level: Level, event: &str, message: &str, details: Value) -> Value {
    let mut data = json!({ "event": event, "message": message });
    if let (Some(data), Value::Object(details)) = (data.as_object_mut(), details) {
        data.extend(details);
    }
    json!({
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": { "level": level.as_str(), "logger": LOGGER, "data": data },
    })
}

/// The level of a `notifications/message` line, when it is one (to filter what is relayed).
pub fn level_of(notification: &Value) -> Option<Level> {
    if notification.get("method").and_then(Value::as_str) != Some("notifications/message") {
        return None;
    }
    Level::from_word(notification["params"]["level"].as_str()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_level_takes_the_eight_words_and_refuses_the_rest() {
        for level in Level::ALL {
            let params = json!({ "level": level.as_str() });
            assert_eq!(read_set_level(Some(&params)), Ok(level));
        }
        for wrong in [
            json!({ "level": "verbose" }),
            json!({ "level": 3 }),
            json!({}),
        ] {
            let said = read_set_level(Some(&wrong)).unwrap_err();
            assert!(said.contains("warning"), "{said}");
        }
        assert!(read_set_level(None).is_err());
        assert!(Level::Debug < Level::Info && Level::Alert < Level::Emergency);
    }

    #[test]
    fn a_message_names_its_level_logger_event_and_facts() {
        let note = message(Level::Warning, "link_lost", "lost", json!({ "port": 4400 }));
        assert_eq!(note["method"], "notifications/message");
        assert_eq!(note["params"]["logger"], LOGGER);
        assert_eq!(note["params"]["data"]["event"], "link_lost");
        assert_eq!(note["params"]["data"]["port"], 4400);
        assert_eq!(level_of(&note), Some(Level::Warning));
        assert_eq!(
            level_of(&json!({ "method": "notifications/progress" })),
            None
        );
    }
}
