//! The router's fallback (anything that is not a route) and its last layer (any error answer
//! the framework wrote as plain text, such as a wrong method, a failed upgrade or a body past its
//! limit, rewritten), so every refusal carries the one refusal body ([`crate::plane::refusal`]).

use axum::http::{StatusCode, header};
use axum::response::Response;

use crate::plane::refusal;

/// Anything that is not a route: the sentence names every route ([`super::routes`]).
pub async fn not_found() -> Response {
    refusal(StatusCode::NOT_FOUND, &super::routes::NOT_FOUND)
}

/// How much of a plain-text error answer is read to word its structured replacement.
const PLAIN_ERROR_BYTES: usize = 2048;

/// Rewrites an error answer that is not JSON into the refusal body, keeping its status and
/// quoting what it said.
pub async fn structured_refusals(response: Response) -> Response {
    let status = response.status();
    let json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if json || !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let said = axum::body::to_bytes(response.into_body(), PLAIN_ERROR_BYTES)
        .await
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .unwrap_or_default();
    let reason = status
        .canonical_reason()
        .unwrap_or("refused")
        .to_lowercase();
    let sentence = if said.is_empty() {
        reason
    } else {
        format!("{reason}: {}", crate::wire::messages::clip(&said, 300))
    };
    refusal(status, &sentence)
}
