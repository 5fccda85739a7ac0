//! How much of a caller's text an answer echoes ([`clip`]) and how long a call may wait
//! ([`bound`]). Pure helpers; they must not know tools.

use std::time::Duration;

/// Echoes user text back at most `max` characters long.
pub(super) fn clip(text: &str, max: usize) -> String {
    if text.chars().count() > max {
        format!("{}…", text.chars().take(max).collect::<String>())
    } else {
        text.to_string()
    }
}

/// A tool name as it may be echoed in a message.
pub fn clip_name(name: &str) -> String {
    clip(name, 80)
}

/// How long a call may wait, from a `timeout_ms` argument.
pub(super) fn bound(timeout_ms: Option<u64>, default: Duration) -> Duration {
    timeout_ms.map(Duration::from_millis).unwrap_or(default)
}
