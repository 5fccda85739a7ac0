//! The one error writer of the HTTP plane: `{"error": <sentence>, "status": <code>}`.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// A refusal with its status and a sentence saying why.
pub fn refusal(status: StatusCode, sentence: &str) -> Response {
    (
        status,
        Json(json!({ "error": sentence, "status": status.as_u16() })),
    )
        .into_response()
}

/// Anything that is not a route.
pub async fn not_found() -> Response {
    refusal(
        StatusCode::NOT_FOUND,
        "no such route on a Reticle daemon (routes: GET /status, GET /mcp/sse, POST /mcp/message, GET /reticle; the harness routes GET /bridge/sessions, POST /bridge/commands and GET /bridge/events exist only when the daemon starts with RETICLE_HARNESS_ROUTES=1)",
    )
}
