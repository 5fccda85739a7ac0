//! What every room that answers on the daemon's HTTP plane shares: which peers and `Host` names
//! are loopback, and the one refusal body (`{"error": <sentence>, "status": <code>}`, and its
//! sentence read back by a client of the plane). Used by
//! the HTTP guard, the bridge's origin tier and routes, the MCP endpoint and the daemon's bind
//! check. A leaf: it imports no other room, and it must not route, admit or refuse on its own.

use std::net::IpAddr;

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// Whether an address is loopback, including IPv4-mapped IPv6.
pub fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// Whether a `Host` header value names a loopback host (with or without a port).
pub fn host_is_loopback(host: &str) -> bool {
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        host.rsplit_once(':').map_or(host, |(name, _)| name)
    };
    name.eq_ignore_ascii_case("localhost") || name.parse::<IpAddr>().is_ok_and(is_loopback)
}

/// A refusal with its status and a sentence saying why.
pub fn refusal(status: StatusCode, sentence: &str) -> Response {
    (
        status,
        Json(json!({ "error": sentence, "status": status.as_u16() })),
    )
        .into_response()
}

/// The sentence of a refusal body another process received (`None`: not one).
fn refusal_sentence(body: &[u8]) -> Option<String> {
    let body: serde_json::Value = serde_json::from_slice(body).ok()?;
    body.get("error")?.as_str().map(str::to_string)
}

/// A client's `sentence` about a refused request, with the refusal's own words after it when
/// `body` is a refusal body.
pub fn quoting_refusal(sentence: String, body: Option<&[u8]>) -> String {
    match body.and_then(refusal_sentence) {
        Some(why) => format!("{sentence}: {why}"),
        None => sentence,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_body_gives_back_its_sentence_and_nothing_else_does() {
        assert_eq!(
            refusal_sentence(br#"{"error": "too many", "status": 503}"#).as_deref(),
            Some("too many")
        );
        assert_eq!(refusal_sentence(b"Service Unavailable"), None);
        assert_eq!(refusal_sentence(br#"{"error": {"code": 1}}"#), None);
        assert_eq!(
            quoting_refusal("HTTP 503".into(), Some(br#"{"error": "full"}"#)),
            "HTTP 503: full"
        );
        assert_eq!(
            quoting_refusal("HTTP 503".into(), Some(b"busy")),
            "HTTP 503"
        );
    }

    #[test]
    fn loopback_hosts_are_recognised_and_rebinding_names_are_not() {
        for host in [
            "localhost",
            "localhost:4400",
            "127.0.0.1:1",
            "127.9.9.9",
            "[::1]:4400",
        ] {
            assert!(host_is_loopback(host), "{host}");
        }
        for host in [
            "evil.example",
            "evil.example:4400",
            "10.0.0.1:4400",
            "localhost.evil.example",
        ] {
            assert!(!host_is_loopback(host), "{host}");
        }
    }
}
