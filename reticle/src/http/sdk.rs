//! The daemon serves its own browser SDK, embedded at build time as one bundled module
//! (`build.rs`), so a page's SDK always speaks the daemon's protocol and loads in one fetch;
//! `GET /sdk/pairing` hands the token to a loopback page. Every answer carries CORS for a
//! loopback `Origin` only, behind the HTTP guard (see `docs/security.md`, "The served SDK").
//!
//! It serves files and the pairing; it must not route anything else.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::assembly::AppState;
use crate::plane::{host_is_loopback, refusal};

include!(concat!(env!("OUT_DIR"), "/sdk_files.rs"));

/// The path every page imports.
pub const ENTRY: &str = "reticle.js";
/// How long a tagged module may be cached (a year; the tag changes with the SDK).
const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// The cache tag in the served URLs: the daemon's version and the SDK's digest.
pub fn tag() -> String {
    format!("{}-{}", env!("CARGO_PKG_VERSION"), &SDK_DIGEST[..12])
}

/// Whether an `Origin` header names a loopback `http(s)` origin.
pub fn origin_is_loopback(origin: &str) -> bool {
    ["http://", "https://"]
        .iter()
        .find_map(|scheme| origin.strip_prefix(scheme))
        .is_some_and(|authority| !authority.contains('/') && host_is_loopback(authority))
}

/// The request's `Origin` when it is loopback.
fn loopback_origin(headers: &HeaderMap) -> Option<HeaderValue> {
    headers
        .get(header::ORIGIN)
        .filter(|o| o.to_str().is_ok_and(origin_is_loopback))
        .cloned()
}

/// Adds CORS for a loopback `Origin`; nothing for any other.
fn with_cors(headers: &HeaderMap, mut response: Response) -> Response {
    let out = response.headers_mut();
    out.insert(header::VARY, HeaderValue::from_static("Origin"));
    if let Some(origin) = loopback_origin(headers) {
        out.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    }
    response
}

/// `GET /sdk/reticle.js`: a redirect, never cached, to the tagged entry `/sdk/<tag>/reticle.js`
/// ([`tag`]: the daemon's version and a digest of the SDK).
pub async fn sdk_entry_show(headers: HeaderMap) -> Response {
    let location = format!("/sdk/{}/{ENTRY}", tag());
    let response = (
        StatusCode::FOUND,
        [
            (header::LOCATION, location),
            (header::CACHE_CONTROL, "no-cache".to_string()),
        ],
    )
        .into_response();
    with_cors(&headers, response)
}

/// `GET /sdk/{tag}/{*path}`: one embedded module, `immutable` for a year; another tag is a 404.
pub async fn sdk_module_show(
    Path((asked_tag, path)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let found = SDK_FILES.iter().find(|(name, _)| *name == path);
    let response = match found {
        Some((_, body)) if asked_tag == tag() => (
            [
                (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
                (header::CACHE_CONTROL, IMMUTABLE),
            ],
            *body,
        )
            .into_response(),
        _ => refusal(
            StatusCode::NOT_FOUND,
            &format!(
                "no such SDK module; this daemon serves its SDK under /sdk/{}/ (import /sdk/{ENTRY})",
                tag()
            ),
        ),
    };
    with_cors(&headers, response)
}

/// `GET /sdk/pairing`: the pairing token, for a loopback `Origin` only (the served module
/// learns it here, so nobody pastes it into code); any other `Origin`, or none, is refused.
pub async fn sdk_pairing_show(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let response = match (loopback_origin(&headers), &state.token) {
        (Some(_), Some(token)) => (
            [(header::CACHE_CONTROL, "no-store")],
            axum::Json(json!({ "token": token.expose() })),
        )
            .into_response(),
        (Some(_), None) => refusal(
            StatusCode::SERVICE_UNAVAILABLE,
            "this daemon has no pairing token to give",
        ),
        (None, _) => refusal(
            StatusCode::FORBIDDEN,
            "the pairing token is given only to pages on a loopback origin (http://localhost or http://127.0.0.1)",
        ),
    };
    with_cors(&headers, response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_http_origins_are_loopback() {
        for yes in [
            "http://localhost:5173",
            "http://127.0.0.1:3000",
            "https://localhost",
            "http://[::1]:8080",
        ] {
            assert!(origin_is_loopback(yes), "{yes}");
        }
        for no in [
            "https://example.com",
            "http://localhost.example.com",
            "null",
            "file://",
            "http://192.168.1.2:5173",
            "http://127.0.0.1.evil.test",
        ] {
            assert!(!origin_is_loopback(no), "{no}");
        }
    }

    #[test]
    fn the_embedded_sdk_is_one_file_holding_every_module() {
        assert_eq!(SDK_FILES.len(), 1, "one file");
        let (name, bundle) = SDK_FILES[0];
        assert_eq!(name, ENTRY);
        assert!(
            bundle.contains("export function connect"),
            "the entry's exports"
        );
        assert!(
            bundle.contains("// ── src/core.js"),
            "the modules it imports"
        );
        assert!(!bundle.contains("from './"), "no import left to fetch");
        assert!(tag().starts_with(env!("CARGO_PKG_VERSION")));
    }
}
