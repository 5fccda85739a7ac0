//! The HTTP guard: loopback peers that name a loopback `Host` are served without a token (the
//! `Host` check defeats DNS rebinding); anything else must present the pairing token as
//! `Authorization: Bearer <token>` or `?token=`. It admits or refuses; it must not route.

use std::net::{IpAddr, SocketAddr};

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;

use super::AppState;
use super::errors::refusal;

/// Middleware admitting loopback-and-local-Host requests, or requests with the token.
pub async fn loopback_or_token(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: Request,
    next: Next,
) -> Response {
    let local_host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .is_some_and(host_is_loopback);
    if (is_loopback(peer.ip()) && local_host) || presents_token(&state, &request) {
        return next.run(request).await;
    }
    refusal(
        StatusCode::UNAUTHORIZED,
        "unauthorized: only loopback clients naming a loopback Host are served without the pairing token",
    )
}

fn presents_token(state: &AppState, request: &Request) -> bool {
    let Some(token) = &state.token else {
        return false;
    };
    let bearer = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.strip_prefix("Bearer "));
    let query = request
        .uri()
        .query()
        .and_then(|q| q.split('&').find_map(|pair| pair.strip_prefix("token=")));
    bearer.or(query).is_some_and(|t| token.matches(t))
}

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

#[cfg(test)]
mod tests {
    use super::*;

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
