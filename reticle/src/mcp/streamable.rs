//! MCP's Streamable HTTP transport (revisions 2025-03-26 on) at [`STREAMABLE_PATH`], so an HTTP
//! client reaches the daemon without `reticle mcp`. It keeps sessions by `Mcp-Session-Id` over
//! the SSE transport's protocol session ([`super::session`]: same methods, caps and tool layer).
//!
//! Nothing here outlives the daemon: a client sees a daemon that died as a failed connection and
//! must initialize again. It must not offer a server-to-client stream (`GET` is 405).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::batch;
use super::inline::Outcome;
use super::jsonrpc::{self, Kind};
use super::protocol::SUPPORTED_VERSIONS;
use super::session::ProtocolSession;
use super::{McpState, limits};
use crate::daemon::activity::Holder;
use crate::plane::refusal;
use crate::tools::ToolContext;

/// The Streamable HTTP endpoint.
pub const STREAMABLE_PATH: &str = "/mcp";
/// The header naming the protocol session, from `initialize`'s answer on.
pub const SESSION_HEADER: &str = "mcp-session-id";
/// The header naming the protocol revision a client negotiated.
pub const VERSION_HEADER: &str = "mcp-protocol-version";
/// How long a session may go without a request before the next `initialize` closes it.
pub const HTTP_SESSION_IDLE: Duration = Duration::from_secs(30 * 60);

/// One Streamable HTTP session: its protocol session (which hands each answer to the POST that
/// claimed it, [`super::inline`]) and when it last saw a request.
#[derive(Debug)]
pub struct HttpSession {
    protocol: Arc<ProtocolSession>,
    last_request: Mutex<Instant>,
}

impl HttpSession {
    /// Opens a session. Every answer goes to the POST that claimed it; a line no POST waits for
    /// (a notification) is dropped, as no stream is offered here.
    fn open() -> Self {
        let (tx, mut rx) = mpsc::channel::<String>(crate::config::MCP_STREAM_BACKLOG);
        // Ends when the protocol session (the channel's only sender) is gone.
        tokio::spawn(async move { while rx.recv().await.is_some() {} });
        let id = uuid::Uuid::new_v4().to_string();
        Self {
            protocol: Arc::new(ProtocolSession::new(id, tx)),
            last_request: Mutex::new(Instant::now()),
        }
    }

    fn idle_for(&self) -> Duration {
        lock(&self.last_request).elapsed()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// A `MCP-Protocol-Version` header naming a revision Reticle does not speak, refused 400 as the
/// transport requires (no header: the client predates it, and is served).
fn unsupported_version(headers: &HeaderMap) -> Option<Response> {
    let named = headers.get(VERSION_HEADER)?;
    let known = named
        .to_str()
        .is_ok_and(|v| SUPPORTED_VERSIONS.contains(&v.trim()));
    (!known).then(|| {
        refusal(
            StatusCode::BAD_REQUEST,
            &format!(
                "{VERSION_HEADER} {} is not a protocol revision this daemon speaks ({})",
                String::from_utf8_lossy(named.as_bytes()),
                SUPPORTED_VERSIONS.join(", ")
            ),
        )
    })
}

/// `POST /mcp`: one JSON-RPC message (or, on a session of 2025-03-26 or before, a batch:
/// [`batch`]). A request is answered in this POST's own response as `application/json`; a
/// notification or response gets 202. `initialize`, sent without
/// [`SESSION_HEADER`], opens a session and names it there; a [`VERSION_HEADER`] naming a
/// revision Reticle does not speak is refused 400.
pub async fn mcp_streamable_post(
    State(mcp): State<McpState>,
    State(ctx): State<ToolContext>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let _agent = ctx.activity.attach(Holder::Agent);
    let text = match std::str::from_utf8(&body) {
        Ok(text) => text,
        Err(_) => {
            let invalid = jsonrpc::Invalid {
                code: jsonrpc::PARSE_ERROR,
                id: Value::Null,
                reason: "parse error: the message is not UTF-8".into(),
            };
            return json_answer(StatusCode::BAD_REQUEST, invalid.response().to_string());
        }
    };
    let named = headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok());
    if batch::is_batch(text)
        && let Some(session) = named.and_then(|id| mcp.http_session(id))
    {
        if let Some(refused) = unsupported_version(&headers) {
            return refused;
        }
        *lock(&session.last_request) = Instant::now();
        return batch::answer(&session.protocol, text, &mcp, &ctx).await;
    }
    let message = match jsonrpc::parse(text) {
        Ok(message) => message,
        Err(invalid) => {
            return json_answer(StatusCode::BAD_REQUEST, invalid.response().to_string());
        }
    };
    if let Some(refused) = unsupported_version(&headers) {
        return refused;
    }
    let (session, opened) = match named {
        Some(id) => match mcp.http_session(id) {
            Some(session) => (session, false),
            None => {
                return refusal(
                    StatusCode::NOT_FOUND,
                    &format!(
                        "no MCP session {id} on this daemon: it was ended, or it belongs to an earlier daemon life; send initialize again without {SESSION_HEADER}"
                    ),
                );
            }
        },
        None if message.method() == Some("initialize") => match open_session(&mcp) {
            Ok(session) => (session, true),
            Err(sentence) => return refusal(StatusCode::SERVICE_UNAVAILABLE, &sentence),
        },
        None => {
            return refusal(
                StatusCode::BAD_REQUEST,
                &format!(
                    "no {SESSION_HEADER} header: open a session with initialize first, then send its id with every message"
                ),
            );
        }
    };
    *lock(&session.last_request) = Instant::now();
    let protocol = &session.protocol;
    if protocol.backlog_full() {
        mcp.log_refusal(protocol.id(), "post", "stream_backlog");
        return refusal(
            StatusCode::SERVICE_UNAVAILABLE,
            &limits::backlog_refusal(protocol.id()),
        );
    }
    let Kind::Request { id, .. } = &message.kind else {
        protocol.handle(message, &mcp, &ctx).await;
        return StatusCode::ACCEPTED.into_response();
    };
    let Some(claim) = protocol.claim_answer(id) else {
        let reason = "this request id is already waiting for its answer on this session; send each request with a fresh id";
        let answer = jsonrpc::error_response(id, jsonrpc::INVALID_REQUEST, reason, None);
        return json_answer(StatusCode::OK, answer.to_string());
    };
    protocol.handle(message, &mcp, &ctx).await;
    let line = match claim.answer().await {
        Outcome::Answer(line) => line,
        // The client cancelled it: the protocol says not to answer, so the POST carries nothing.
        Outcome::Withdrawn => return StatusCode::ACCEPTED.into_response(),
        Outcome::Gone => {
            return refusal(
                StatusCode::SERVICE_UNAVAILABLE,
                "the daemon could not deliver this request's answer (its session was closed); send initialize again",
            );
        }
    };
    let mut response = json_answer(StatusCode::OK, line);
    if opened && !protocol.initialized() {
        // `initialize` was refused (its params): no session was opened after all.
        close_session(&mcp, protocol.id(), "refused");
    } else if opened && let Ok(value) = HeaderValue::from_str(protocol.id()) {
        response.headers_mut().insert(SESSION_HEADER, value);
    }
    response
}

/// `DELETE /mcp`: ends the session the header names (calls still running finish unheard).
pub async fn mcp_streamable_delete(State(mcp): State<McpState>, headers: HeaderMap) -> Response {
    let Some(id) = headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok()) else {
        return refusal(
            StatusCode::BAD_REQUEST,
            &format!("no {SESSION_HEADER} header: name the session to end"),
        );
    };
    if close_session(&mcp, id, "deleted") {
        StatusCode::NO_CONTENT.into_response()
    } else {
        refusal(
            StatusCode::NOT_FOUND,
            &format!("no MCP session {id} on this daemon"),
        )
    }
}

/// `GET /mcp`: no server-to-client stream is offered here (SSE clients use `GET /mcp/sse`), so
/// `notifications/tools/list_changed` reaches only SSE clients.
pub async fn mcp_streamable_get() -> Response {
    let mut response = refusal(
        StatusCode::METHOD_NOT_ALLOWED,
        "this endpoint answers each request in its POST's response and offers no stream; GET /mcp/sse opens the SSE transport",
    );
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("POST, DELETE"));
    response
}

pub(super) fn json_answer(status: StatusCode, line: String) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        jsonrpc::as_sent(line),
    )
        .into_response()
}

/// Opens a session (after closing those idle past [`HTTP_SESSION_IDLE`]), unless the session cap
/// is reached (then the refusal to give).
fn open_session(mcp: &McpState) -> Result<Arc<HttpSession>, String> {
    let idle: Vec<String> = lock(&mcp.inner.http_sessions)
        .iter()
        .filter(|(_, s)| s.idle_for() > HTTP_SESSION_IDLE && !s.protocol.answers_awaited())
        .map(|(id, _)| id.clone())
        .collect();
    for id in idle {
        close_session(mcp, &id, "idle");
    }
    let session = Arc::new(HttpSession::open());
    let id = session.protocol.id().to_string();
    if let Err(sentence) = mcp.register(session.protocol.clone()) {
        mcp.log_refusal(&id, "initialize", "session_cap");
        return Err(sentence);
    }
    lock(&mcp.inner.http_sessions).insert(id.clone(), session.clone());
    mcp.log(
        "mcp_client_connected",
        json!({ "session": id, "transport": "http", "streams": mcp.session_count() }),
    );
    Ok(session)
}

/// Closes the Streamable HTTP session least recently used that no POST waits on, to make room
/// under the session cap (clients that never DELETE theirs, such as the official SDK's `close()`,
/// would otherwise fill it); its next request is refused as an unknown session, so its client
/// opens a new one. Whether one was closed.
pub(super) fn make_room(mcp: &McpState) -> bool {
    let least_recent = lock(&mcp.inner.http_sessions)
        .iter()
        .filter(|(_, s)| !s.protocol.answers_awaited())
        .max_by_key(|(_, s)| s.idle_for())
        .map(|(id, _)| id.clone());
    least_recent.is_some_and(|id| close_session(mcp, &id, "least_recent_at_cap"))
}

/// Closes one session; whether it was open.
fn close_session(mcp: &McpState, id: &str, why: &str) -> bool {
    let Some(session) = lock(&mcp.inner.http_sessions).remove(id) else {
        return false;
    };
    mcp.deregister(id);
    mcp.log(
        "mcp_client_disconnected",
        json!({ "session": id, "transport": "http", "reason": why, "idleMs": session.idle_for().as_millis() as u64, "streams": mcp.session_count() }),
    );
    true
}
