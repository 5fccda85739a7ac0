//! The one error the REST API speaks: `{"error": "...", "status": N}`, Toxiproxy's shape.
//!
//! It owns [`ApiError`], the named errors the API can return (each carrying its status), and
//! the single writer that turns an error into an HTTP response. Anything that is not an
//! `ApiError` becomes a 500 through [`ApiError::internal`], which also logs it. It must not
//! decide *when* an error happens; the proxy, collection and API modules do.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

/// An error with the HTTP status it should be answered with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{error} (HTTP {status})")]
pub struct ApiError {
    /// A lowercase message; for joined errors, `"<kind>: <detail>"`.
    pub error: String,
    /// The HTTP status code.
    pub status: u16,
}

impl ApiError {
    /// An error with a message and a status.
    pub fn new(error: impl Into<String>, status: StatusCode) -> Self {
        Self {
            error: error.into(),
            status: status.as_u16(),
        }
    }

    /// This error with `detail` appended, as Toxiproxy's `joinError` does:
    /// `"missing required field: name"`.
    pub fn with_detail(mut self, detail: impl std::fmt::Display) -> Self {
        self.error = format!("{}: {detail}", self.error);
        self
    }

    /// Anything unexpected: answered as a 500 and logged, never swallowed.
    pub fn internal(err: impl std::fmt::Display) -> Self {
        tracing::warn!(error = %err, "error did not carry a status; answering 500");
        Self::new(err.to_string(), StatusCode::INTERNAL_SERVER_ERROR)
    }

    /// The status as a typed code.
    pub fn status_code(&self) -> StatusCode {
        StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    /// The body could not be read as the JSON the endpoint expects.
    pub fn bad_request_body() -> Self {
        Self::new("bad request body", StatusCode::BAD_REQUEST)
    }
    /// A required field was empty or absent; use [`ApiError::with_detail`] to name it.
    pub fn missing_field() -> Self {
        Self::new("missing required field", StatusCode::BAD_REQUEST)
    }
    /// No proxy has that name.
    pub fn proxy_not_found() -> Self {
        Self::new("proxy not found", StatusCode::NOT_FOUND)
    }
    /// A proxy with that name exists already.
    pub fn proxy_already_exists() -> Self {
        Self::new("proxy already exists", StatusCode::CONFLICT)
    }
    /// The `stream` field was not `upstream` or `downstream`.
    pub fn invalid_stream() -> Self {
        Self::new(
            "stream was invalid, can be either upstream or downstream",
            StatusCode::BAD_REQUEST,
        )
    }
    /// No toxic is registered under that `type`.
    pub fn invalid_toxic_type() -> Self {
        Self::new("invalid toxic type", StatusCode::BAD_REQUEST)
    }
    /// `toxicity` was outside `[0, 1]` (Toxiproxy accepts it silently; we do not).
    pub fn invalid_toxicity() -> Self {
        Self::new("toxicity must be between 0 and 1", StatusCode::BAD_REQUEST)
    }
    /// A toxic with that name exists already on the proxy.
    pub fn toxic_already_exists() -> Self {
        Self::new("toxic already exists", StatusCode::CONFLICT)
    }
    /// The proxy has no toxic with that name.
    pub fn toxic_not_found() -> Self {
        Self::new("toxic not found", StatusCode::NOT_FOUND)
    }
    /// A listen address that is not on loopback: this proxy is localhost-only.
    pub fn not_loopback() -> Self {
        Self::new(
            "listen address must be on loopback (127.0.0.0/8 or ::1)",
            StatusCode::BAD_REQUEST,
        )
    }
    /// A request from a browser, refused so a web page cannot reconfigure faults.
    pub fn browser_refused() -> Self {
        Self::new("user agent not allowed", StatusCode::FORBIDDEN)
    }
    /// No route matched.
    pub fn route_not_found() -> Self {
        Self::new("not found", StatusCode::NOT_FOUND)
    }
    /// The route exists but not for this method.
    pub fn method_not_allowed() -> Self {
        Self::new("method not allowed", StatusCode::METHOD_NOT_ALLOWED)
    }
}

/// The single writer: every error response of the API goes through here.
impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status_code();
        (status, axum::Json(self)).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serializes_as_toxiproxy_does() {
        let e = ApiError::missing_field().with_detail("name");
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            serde_json::json!({"error": "missing required field: name", "status": 400})
        );
        assert_eq!(ApiError::proxy_not_found().status, 404);
        assert_eq!(ApiError::toxic_already_exists().status, 409);
    }
}
