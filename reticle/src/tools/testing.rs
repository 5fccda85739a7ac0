//! Tools that exist only when a test asks for them through `RETICLE_TEST_CATALOGUE`: a call that
//! takes a chosen time (to hold calls in flight while a fault is injected) and an echo.

use std::time::Duration;

use rmcp::model::CallToolResult;
use serde_json::{Map, Value, json};

use super::refuse_unknown;

pub const SLEEP: &str = "reticle_test_sleep";
pub const ECHO: &str = "reticle_test_echo";

/// The longest a test sleep may take.
const MAX_SLEEP_MS: u64 = 600_000;

pub fn sleep_schema() -> Value {
    json!({
        "type": "object",
        "properties": { "ms": { "type": "integer", "minimum": 0, "maximum": MAX_SLEEP_MS } },
        "required": ["ms"],
        "additionalProperties": false
    })
}

pub fn echo_schema() -> Value {
    json!({ "type": "object" })
}

/// Waits `ms` milliseconds, then answers how long it waited.
pub async fn sleep(arguments: &Map<String, Value>) -> Result<CallToolResult, String> {
    refuse_unknown(arguments, &["ms"])?;
    let ms = arguments
        .get("ms")
        .and_then(Value::as_u64)
        .filter(|ms| *ms <= MAX_SLEEP_MS)
        .ok_or_else(|| format!("'ms' must be a whole number from 0 to {MAX_SLEEP_MS}"))?;
    tokio::time::sleep(Duration::from_millis(ms)).await;
    Ok(CallToolResult::structured(json!({ "sleptMs": ms })))
}

/// Answers with its arguments.
pub fn echo(arguments: Map<String, Value>) -> CallToolResult {
    CallToolResult::structured(json!({ "echo": arguments }))
}
