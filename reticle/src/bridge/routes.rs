//! The bridge's HTTP surface. `GET /reticle` is the page's WebSocket (behind the origin tier,
//! not the HTTP guard: a page cannot send headers, its token travels in the hello). The
//! `/bridge/*` routes drive sessions over plain HTTP for gates and benches; they are mounted
//! only under `RETICLE_HARNESS_ROUTES` (an agent reaches pages through tool calls alone) and sit
//! behind the HTTP guard like `/status`. Each handler takes only the bridge (`State<Bridge>`);
//! the router that mounts them is [`crate::http`]'s, which this room must not import.

use std::time::Duration;

use axum::Json;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use super::connection;
use super::origin;
use super::registry::Bridge;
use super::registry::{BridgeError, ResolveError};
use super::session::{Cursor, Reply};
use crate::plane::refusal;
use crate::wire::limits::MAX_FRAME_BYTES;
use crate::wire::messages::FrameClues;

/// `GET /reticle`: judges the Origin, then upgrades to the bridge socket.
pub async fn socket_upgrade(
    State(bridge): State<Bridge>,
    headers: HeaderMap,
    upgrade: WebSocketUpgrade,
) -> Response {
    let origin = headers
        .get(header::ORIGIN)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    if let Err(sentence) = origin::judge(
        origin.as_deref(),
        &bridge.config().allowed_origins,
        bridge.has_token(),
    ) {
        bridge.note_refusal(
            StatusCode::FORBIDDEN.as_u16(),
            crate::wire::close::refused_kind::ORIGIN_REFUSED,
            &sentence,
            &FrameClues::default(),
            origin.as_deref(),
        );
        return refusal(StatusCode::FORBIDDEN, &sentence);
    }
    upgrade
        .max_message_size(MAX_FRAME_BYTES)
        .max_frame_size(MAX_FRAME_BYTES)
        .on_upgrade(move |socket| connection::serve(bridge, socket, origin))
}

/// `GET /bridge/sessions`: every connected session with its counters and head cursor.
pub async fn sessions_index(State(bridge): State<Bridge>) -> Json<Value> {
    let sessions: Vec<Value> = bridge
        .sessions()
        .iter()
        .map(|s| {
            json!({
                "id": s.id(),
                "pageId": s.page_id(),
                "life": s.life(),
                "connectedAt": s.connected_at(),
                "lastSeenMs": s.last_seen_ms(),
                "idle": s.is_idle(),
                "identity": s.identity(),
                "counters": s.counters(),
                "pendingCommands": s.pending_count(),
                "head": s.head(),
            })
        })
        .collect();
    Json(json!({
        "sessions": sessions,
        "pendingHandshakes": bridge.pending_handshakes(),
        "refused": bridge.refused(),
    }))
}

/// The body of `POST /bridge/commands`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandRequest {
    /// The session; resolved as the tool layer would when absent.
    #[serde(default)]
    pub session: Option<String>,
    pub name: String,
    #[serde(default)]
    pub args: Value,
    /// The bound in milliseconds (default 8000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

/// `POST /bridge/commands`: runs one command and says how it ended: `answered` (with the
/// page's `ok`), `observation_lost`, `timed_out`, or a resolve failure (404).
pub async fn commands_create(
    State(bridge): State<Bridge>,
    Json(request): Json<CommandRequest>,
) -> Response {
    let bound = request.timeout_ms.map(Duration::from_millis);
    let outcome = bridge
        .command(
            request.session.as_deref(),
            &request.name,
            request.args,
            bound,
        )
        .await;
    match outcome {
        Ok(answer) => {
            let mut body = json!({
                "outcome": "answered",
                "roundTripUs": answer.round_trip.as_micros() as u64,
                "revived": answer.revived,
            });
            match answer.reply {
                Reply::Done(result) => {
                    body["ok"] = json!(true);
                    body["result"] = result;
                }
                Reply::Refused(error) => {
                    body["ok"] = json!(false);
                    body["error"] = json!(error);
                }
            }
            Json(body).into_response()
        }
        Err(BridgeError::Command(err)) => Json(json!({
            "outcome": err.word(),
            "reason": err.to_string(),
        }))
        .into_response(),
        Err(BridgeError::Resolve(err)) => resolve_refusal(&err),
    }
}

fn resolve_refusal(err: &ResolveError) -> Response {
    let status = match err {
        ResolveError::Ambiguous { .. } => StatusCode::CONFLICT,
        ResolveError::NoSessions { .. } | ResolveError::NotFound { .. } => StatusCode::NOT_FOUND,
    };
    refusal(status, &err.to_string())
}

/// The query of `GET /bridge/events`.
#[derive(Debug, Deserialize)]
pub struct EventsQuery {
    #[serde(default)]
    pub session: Option<String>,
    /// A cursor `<life>:<seq>` from an earlier read; absent reads from the life's start.
    #[serde(default)]
    pub since: Option<String>,
    #[serde(default)]
    pub limit: Option<usize>,
}

/// `GET /bridge/events`: a session's events from a cursor, saying how many were evicted.
pub async fn events_index(
    State(bridge): State<Bridge>,
    Query(query): Query<EventsQuery>,
) -> Response {
    let since = match query.since.as_deref().map(str::parse::<Cursor>).transpose() {
        Ok(since) => since,
        Err(sentence) => return refusal(StatusCode::BAD_REQUEST, &sentence),
    };
    match bridge.events_since(query.session.as_deref(), since, query.limit) {
        Ok(read) => Json(read).into_response(),
        Err(err) => resolve_refusal(&err),
    }
}
