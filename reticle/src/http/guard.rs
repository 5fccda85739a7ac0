//! The HTTP guard: loopback peers that name a loopback `Host` are served without a token (the
//! `Host` check defeats DNS rebinding); anything else must present the pairing token as
//! `Authorization: Bearer <token>` or `?token=`. It admits or refuses; it must not route. What is
//! loopback, and the refusal body, come from [`crate::plane`].

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;

use crate::assembly::AppState;
use crate::plane::{host_is_loopback, is_loopback, refusal};

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
