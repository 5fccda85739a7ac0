//! JSON-RPC batches on Streamable HTTP, for a session that agreed to a revision that has them
//! (2025-03-26 and before; MCP removed them after): each member handled in order, the answers to
//! its requests returned together as one array. A session on a later revision is refused -32600,
//! as before. It reads members and collects answers; what each method does is the session's.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use serde_json::value::RawValue;

use super::McpState;
use super::inline::Outcome;
use super::jsonrpc::{self, INVALID_REQUEST, Kind};
use super::session::ProtocolSession;
use crate::tools::ToolContext;

/// The newest revision whose sessions may send batches.
pub const LAST_REVISION_WITH_BATCHES: &str = "2025-03-26";

/// Whether `body` (already UTF-8) is a batch: a JSON array at the top.
pub fn is_batch(body: &str) -> bool {
    body.trim_start().starts_with('[')
}

/// Whether a session that agreed to `revision` may send batches (revisions are dates).
pub fn revision_has_batches(revision: &str) -> bool {
    revision <= LAST_REVISION_WITH_BATCHES
}

/// Handles batch `body` on `protocol` (an initialized session), answering with the array of its
/// requests' answers (202 when it held only notifications and responses).
pub async fn answer(
    protocol: &std::sync::Arc<ProtocolSession>,
    body: &str,
    mcp: &McpState,
    ctx: &ToolContext,
) -> Response {
    let refuse = |reason: String| {
        let answer = jsonrpc::error_response(&Value::Null, INVALID_REQUEST, &reason, None);
        super::streamable::json_answer(StatusCode::OK, answer.to_string())
    };
    match protocol.negotiated() {
        Some(revision) if revision_has_batches(revision) => {}
        Some(revision) => {
            return refuse(format!(
                "invalid request: batches are not supported on protocol {revision} (MCP removed them after {LAST_REVISION_WITH_BATCHES}); send one JSON-RPC object per POST"
            ));
        }
        None => {
            return refuse(
                "invalid request: initialize first, on its own (it may not be part of a batch)"
                    .into(),
            );
        }
    }
    let members: Vec<&RawValue> = match serde_json::from_str(body) {
        Ok(members) => members,
        Err(err) => {
            let answer = jsonrpc::error_response(
                &Value::Null,
                jsonrpc::PARSE_ERROR,
                &format!("parse error: the batch is not JSON ({err})"),
                None,
            );
            return super::streamable::json_answer(StatusCode::BAD_REQUEST, answer.to_string());
        }
    };
    if members.is_empty() {
        return refuse("invalid request: an empty batch holds nothing to do".into());
    }
    // One slot per member owed an answer, in the batch's order.
    enum Slot {
        Ready(String),
        Waiting(super::inline::AnswerWaiter),
    }
    let mut slots = Vec::new();
    for member in members {
        let message = match jsonrpc::parse(member.get()) {
            Ok(message) => message,
            Err(invalid) => {
                slots.push(Slot::Ready(invalid.response().to_string()));
                continue;
            }
        };
        if message.method() == Some("initialize") {
            let id = message.id().cloned().unwrap_or(Value::Null);
            let reason = "invalid request: initialize may not be part of a batch";
            let refused = jsonrpc::error_response(&id, INVALID_REQUEST, reason, None);
            slots.push(Slot::Ready(refused.to_string()));
            continue;
        }
        if let Kind::Request { id, .. } = &message.kind {
            let Some(claim) = protocol.claim_answer(id) else {
                let reason = "invalid request: this request id is already waiting for its answer on this session; send each request with a fresh id";
                let refused = jsonrpc::error_response(id, INVALID_REQUEST, reason, None);
                slots.push(Slot::Ready(refused.to_string()));
                continue;
            };
            slots.push(Slot::Waiting(claim));
        }
        protocol.handle(message, mcp, ctx).await;
    }
    let mut answers = Vec::new();
    for slot in slots {
        let claim = match slot {
            Slot::Ready(line) => {
                answers.push(line);
                continue;
            }
            Slot::Waiting(claim) => claim,
        };
        match claim.answer().await {
            Outcome::Answer(line) => answers.push(line),
            Outcome::Withdrawn => {}
            Outcome::Gone => {
                return crate::plane::refusal(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the daemon could not deliver this batch's answers (its session was closed); send initialize again",
                );
            }
        }
    }
    if answers.is_empty() {
        return StatusCode::ACCEPTED.into_response();
    }
    let lines: Vec<String> = answers.into_iter().map(jsonrpc::as_sent).collect();
    super::streamable::json_answer(StatusCode::OK, format!("[{}]", lines.join(",")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_belong_to_the_revisions_that_had_them() {
        assert!(revision_has_batches("2025-03-26"));
        assert!(revision_has_batches("2024-11-05"));
        assert!(!revision_has_batches("2025-06-18"));
        assert!(!revision_has_batches("2025-11-25"));
        assert!(is_batch("  [{}]"));
        assert!(!is_batch(r#"{"jsonrpc":"2.0"}"#));
    }
}
