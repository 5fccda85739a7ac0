//! The `session` block every live result carries: which tab, how fresh, how awake, and the
//! warning a hidden or silent tab earns. It reads a session; it must not change one.

use serde_json::{Value, json};

use crate::bridge::Session;

/// A tab not heard from for this long is treated as throttled (the SDK reports every 5 s).
pub const THROTTLED_AFTER_MS: u64 = 12_000;

/// The `session` block: how fresh and how awake the tab is.
pub fn session_block(session: &Session) -> (Value, Option<String>) {
    let identity = session.identity();
    let last_seen_ms = session.last_seen_ms();
    let throttled = identity.hidden || last_seen_ms > THROTTLED_AFTER_MS;
    let warning = throttled.then(|| {
        if identity.hidden {
            "the tab is hidden: the browser throttles its timers, so acts and reads may be slow and events late; bring it to the foreground".to_string()
        } else {
            format!(
                "the page has not been heard from for {last_seen_ms} ms: it may be frozen or throttled; bring its tab to the foreground"
            )
        }
    });
    (
        json!({
            "id": session.id(),
            "lastSeenMs": last_seen_ms,
            "focused": identity.focused,
            "hidden": identity.hidden,
            "throttled": throttled,
        }),
        warning,
    )
}
