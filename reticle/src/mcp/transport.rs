//! The legacy SSE transport, by hand: `GET /mcp/sse` opens a stream and `POST
//! /mcp/message?sessionId=..` hands one message to its session, its answer inline when asked
//! ([`INLINE_ANSWER_HEADER`]) and quick, else on the stream. Each open stream keeps the daemon
//! from idling; past the caps ([`super::limits`]) a stream or a POST is refused 503. Handlers
//! take only `State<McpState>` and `State<ToolContext>`; this room must not import
//! [`crate::http`], whose router mounts them.

use std::collections::HashMap;
use std::convert::Infallible;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::{StreamExt, stream};
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::session::ProtocolSession;
use super::{
    AGENT_PARAM, DRIVE_PARAM, ENDPOINT_EVENT, HEADED_PARAM, INLINE_ANSWER, INLINE_ANSWER_HEADER,
    MAX_PROJECT_DIR_BYTES, MESSAGE_EVENT, MESSAGE_PATH, McpState, PEER_CONTRACT_PARAM,
    PEER_VERSION_PARAM, PROJECT_PARAM, SESSION_EVENT, SHUTDOWN_EVENT,
};
use crate::daemon::activity::{Attachment, Holder};
use crate::plane::refusal;
use crate::tools::{ToolContext, ToolHost};
use crate::wire::skew;

/// How often an idle stream carries a keep-alive comment (the proxy treats a long silence as a
/// dead stream).
pub const KEEPALIVE: Duration = Duration::from_secs(1);

/// The longest agent id a stream may name.
const MAX_AGENT_ID: usize = 64;

/// The project directory a stream names: an existing absolute directory, at most
/// [`MAX_PROJECT_DIR_BYTES`]; the refusal sentence otherwise.
fn project_dir(named: &str) -> Result<std::path::PathBuf, String> {
    let dir = std::path::Path::new(named);
    if named.len() > MAX_PROJECT_DIR_BYTES || !dir.is_absolute() || !dir.is_dir() {
        return Err(format!(
            "the {PROJECT_PARAM} parameter must name an existing absolute directory of at most {MAX_PROJECT_DIR_BYTES} bytes (the agent's project); no stream was opened"
        ));
    }
    Ok(dir.to_path_buf())
}

/// `GET /mcp/sse`: opens a stream with a fresh protocol session (503 past the session cap; 400
/// for an agent id that is not 1 to 64 letters, digits, `-` or `_`, or a project that is not an
/// existing absolute directory). A stream naming its project works in that project's workspace.
/// Its events: `endpoint` (the POST path), `reticle-session`, then one `message` per answer,
/// keep-alive comments between, and `reticle-shutdown` before it ends as the daemon shuts down.
/// A stream naming its agent (`?agent=<id>`, minted once per `reticle mcp` process) runs its
/// calls as that agent and counts as one of its links to the lease book (an agent's leases
/// outlive its last link only by the link grace).
pub async fn mcp_sse_open(
    State(mcp): State<McpState>,
    State(ctx): State<ToolContext>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let agent = query.get(AGENT_PARAM).cloned();
    if let Some(agent) = &agent
        && !valid_agent_id(agent)
    {
        return refusal(
            StatusCode::BAD_REQUEST,
            &format!(
                "the {AGENT_PARAM} parameter must be 1 to {MAX_AGENT_ID} letters, digits, '-' or '_'; no stream was opened"
            ),
        );
    }
    let project = match query.get(PROJECT_PARAM).map(|dir| project_dir(dir)) {
        None => None,
        Some(Ok(dir)) => Some(dir),
        Some(Err(why)) => return refusal(StatusCode::BAD_REQUEST, &why),
    };
    let drive = match query
        .get(DRIVE_PARAM)
        .map(|url| crate::drive::loopback_url(url))
    {
        None => None,
        Some(Ok(url)) => Some(url),
        Some(Err(why)) => {
            return refusal(
                StatusCode::BAD_REQUEST,
                &format!("the {DRIVE_PARAM} parameter: {why}; no stream was opened"),
            );
        }
    };
    let headed = query.get(HEADED_PARAM).is_some_and(|v| v == "1");
    let peer = |name: &str| query.get(name).map(|v| crate::wire::messages::clip(v, 64));
    let (peer_version, peer_contract) = (peer(PEER_VERSION_PARAM), peer(PEER_CONTRACT_PARAM));
    if (peer_version.is_some() || peer_contract.is_some())
        && let Some(sentence) = skew::describe(
            skew::Pair::Daemon,
            "the agent's reticle mcp",
            peer_version.as_deref(),
            peer_contract.as_deref(),
        )
    {
        mcp.note_skew(skew::Pair::Daemon, sentence);
    }
    let id = uuid::Uuid::new_v4().to_string();
    let (tx, rx) = mpsc::channel(crate::config::MCP_STREAM_BACKLOG);
    let session = ProtocolSession::new(id.clone(), tx)
        .for_agent(agent)
        .in_project(project);
    let agent = session.agent().to_string();
    let workspace = ctx
        .in_project(session.project())
        .workspace()
        .root()
        .display()
        .to_string();
    if let Err(sentence) = mcp.register(std::sync::Arc::new(session)) {
        mcp.log_refusal(&id, "stream", "session_cap");
        return refusal(StatusCode::SERVICE_UNAVAILABLE, &sentence);
    }
    mcp.log(
        "mcp_client_connected",
        json!({ "session": id, "agent": agent, "workspace": workspace, "streams": mcp.session_count() }),
    );
    ctx.host.leases.link_opened(&agent);
    if let Some(url) = drive {
        let want = crate::drive::Want::Launch { headless: !headed };
        tokio::spawn(crate::tools::driven::drive_for_agent(
            ctx.clone(),
            agent.clone(),
            want,
            url,
        ));
    }
    let guard = StreamGuard {
        mcp: mcp.clone(),
        id: id.clone(),
        agent,
        host: ctx.host.clone(),
        opened: Instant::now(),
        _agent: ctx.activity.attach(Holder::Agent),
    };
    let info = json!({
        "session": id,
        "instance": ctx.info.instance,
        "catalogue": mcp.catalogue().summary(),
    });
    let head = stream::iter([
        Event::default()
            .event(ENDPOINT_EVENT)
            .data(format!("{MESSAGE_PATH}?sessionId={id}")),
        Event::default().event(SESSION_EVENT).data(info.to_string()),
    ])
    .map(Ok::<Event, Infallible>);
    let tail = stream::unfold(
        Some((rx, guard, mcp.shutdown().clone())),
        |open: Option<(mpsc::Receiver<String>, StreamGuard, CancellationToken)>| async move {
            let (mut rx, guard, shutdown) = open?;
            tokio::select! {
                biased;
                line = rx.recv() => {
                    let line = line?;
                    Some((Ok(Event::default().event(MESSAGE_EVENT).data(line)), Some((rx, guard, shutdown))))
                }
                _ = shutdown.cancelled() => {
                    let notice = json!({ "reason": "the daemon is shutting down" }).to_string();
                    Some((Ok(Event::default().event(SHUTDOWN_EVENT).data(notice)), None))
                }
            }
        },
    );
    Sse::new(head.chain(tail))
        .keep_alive(KeepAlive::new().interval(KEEPALIVE))
        .into_response()
}

/// `POST /mcp/message?sessionId=..`: one JSON-RPC message for an open session; 202 once handled
/// (protocol methods) or started (tool calls), 503 while the stream's backlog is full. The
/// answer goes on the session's stream, unless the POST asked for it inline and it came within
/// the inline wait: then it is this POST's `200` response.
pub async fn mcp_message_post(
    State(mcp): State<McpState>,
    State(ctx): State<ToolContext>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(id) = query.get("sessionId") else {
        return refusal(
            StatusCode::BAD_REQUEST,
            "missing sessionId: post to the path the stream's endpoint event named",
        );
    };
    let Some(session) = mcp.session(id) else {
        return refusal(
            StatusCode::NOT_FOUND,
            &format!(
                "no MCP session {id} on this daemon: its stream has ended, or it belongs to an earlier daemon life; open a new stream with GET /mcp/sse"
            ),
        );
    };
    if session.backlog_full() {
        mcp.log_refusal(id, "post", "stream_backlog");
        return refusal(
            StatusCode::SERVICE_UNAVAILABLE,
            &super::limits::backlog_refusal(id),
        );
    }
    let inline_wait = mcp.limits().inline_wait;
    if !inline_wait.is_zero() && asks_inline(&headers) {
        if let Some(answer) = session
            .receive_answering(&body, &mcp, &ctx, inline_wait)
            .await
        {
            return ([(header::CONTENT_TYPE, "application/json")], answer).into_response();
        }
    } else {
        session.receive(&body, &mcp, &ctx).await;
    }
    StatusCode::ACCEPTED.into_response()
}

/// Whether a POST asked to carry its own answer.
fn asks_inline(headers: &HeaderMap) -> bool {
    headers.get(INLINE_ANSWER_HEADER).is_some_and(|value| {
        value
            .as_bytes()
            .eq_ignore_ascii_case(INLINE_ANSWER.as_bytes())
    })
}

/// Whether `agent` may name an agent: 1 to 64 ASCII letters, digits, `-` or `_`.
fn valid_agent_id(agent: &str) -> bool {
    (1..=MAX_AGENT_ID).contains(&agent.len())
        && agent
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Lives as long as one stream: deregisters its session, closes its agent's link in the lease
/// book, releases the `Agent` attachment and logs the close, however the stream ends.
struct StreamGuard {
    mcp: McpState,
    id: String,
    agent: String,
    host: std::sync::Arc<ToolHost>,
    opened: Instant,
    _agent: Attachment,
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.mcp.deregister(&self.id);
        self.host.leases.link_closed(&self.agent);
        if !self.host.leases.link_open(&self.agent) {
            crate::tools::driven::release_when_gone(self.host.clone(), self.agent.clone());
        }
        self.mcp.log(
            "mcp_client_disconnected",
            json!({
                "session": self.id,
                "agent": self.agent,
                "durationMs": self.opened.elapsed().as_millis() as u64,
                "streams": self.mcp.session_count(),
            }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_id_is_one_to_sixty_four_plain_characters() {
        for good in ["a", "0f3c9e2b7d", "agent_1-x", &"x".repeat(MAX_AGENT_ID)] {
            assert!(valid_agent_id(good), "{good}");
        }
        for bad in [
            "",
            "a b",
            "a&b",
            "é",
            "a/../b",
            &"x".repeat(MAX_AGENT_ID + 1),
        ] {
            assert!(!valid_agent_id(bad), "{bad}");
        }
    }
}
