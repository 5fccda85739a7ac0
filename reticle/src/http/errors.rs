//! The router's fallback: anything that is not a route, refused with the one refusal body
//! ([`crate::plane::refusal`]).

use axum::http::StatusCode;
use axum::response::Response;

use crate::plane::refusal;

/// Anything that is not a route.
pub async fn not_found() -> Response {
    refusal(
        StatusCode::NOT_FOUND,
        "no such route on a Reticle daemon (routes: GET /status, GET /mcp/sse, POST /mcp/message, GET /reticle; the harness routes GET /bridge/sessions, POST /bridge/commands and GET /bridge/events exist only when the daemon starts with RETICLE_HARNESS_ROUTES=1)",
    )
}
