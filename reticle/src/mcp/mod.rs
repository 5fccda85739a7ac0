//! The daemon's MCP endpoint: the legacy SSE transport (`GET /mcp/sse` opens a stream, `POST
//! /mcp/message?sessionId=..` takes one JSON-RPC message whose answer arrives on it, or inline in
//! the POST's response for one asking with [`INLINE_ANSWER_HEADER`]), and the same protocol
//! sessions over Streamable HTTP at `/mcp`. This room speaks MCP; it must not run tools itself
//! (that is [`crate::tools::run_tool`]).

// JSON-RPC batches on Streamable HTTP, for the revisions that have them.
pub mod batch;
// The POSTs waiting for their own answers, and which of them gets each answer.
pub mod inline;
// JSON-RPC 2.0 classification, codes and error objects (shared with the proxy).
pub mod jsonrpc;
// The caps on open sessions and running calls, and how their refusals read.
pub mod limits;
// The logging capability's levels and the messages a host shows (shared with the proxy).
pub mod logging;
// The handshake: versions, server identity, instructions (shared with the proxy).
pub mod protocol;
// One protocol session: what each method answers.
pub mod session;
// The Streamable HTTP endpoint: each answer in its POST's response.
pub mod streamable;
// The two HTTP handlers and the stream's frames.
pub mod transport;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::daemon::DaemonLog;
use crate::tools::Catalogue;
use limits::McpLimits;
use session::ProtocolSession;

/// Where a client opens a stream.
pub const SSE_PATH: &str = "/mcp/sse";
/// The query parameter of [`SSE_PATH`] naming the agent a stream belongs to (one id per
/// `reticle mcp` process, the same on each of its reconnects).
pub const AGENT_PARAM: &str = "agent";
/// The query parameter of [`SSE_PATH`] naming the absolute directory of the agent's project
/// (where its `reticle mcp` was started, or `RETICLE_PROJECT_DIR`): the stream's tool calls
/// read and write that project's workspace, not the one the daemon was started for.
pub const PROJECT_PARAM: &str = "project";
/// The query parameters of [`SSE_PATH`] by which the process opening the stream (an agent's
/// `reticle mcp`) says its build and wire contract (the reference's names), so the daemon can
/// tell the agent when they disagree with its own.
pub const PEER_VERSION_PARAM: &str = "peerVersion";
pub const PEER_CONTRACT_PARAM: &str = "peerContract";

/// The part of a stream's query by which this build announces itself (`&peerVersion=..&
/// peerContract=..`), appended by `reticle mcp` to every [`SSE_PATH`] it opens.
pub fn peer_query() -> String {
    format!(
        "&{PEER_VERSION_PARAM}={}&{PEER_CONTRACT_PARAM}={}",
        crate::VERSION,
        crate::wire::CONTRACT
    )
}
/// The query parameters of [`SSE_PATH`] by which `reticle mcp --drive URL [--headed]` asks the
/// daemon for a tab of its own browser on URL for the agent (kept while the agent is linked).
pub const DRIVE_PARAM: &str = "drive";
pub const HEADED_PARAM: &str = "headed";

/// `&drive=<url>[&headed=1]` for a stream's query, percent-encoded; empty without a URL.
pub fn drive_query(url: Option<&str>, headed: bool) -> String {
    let Some(url) = url else {
        return String::new();
    };
    let encoded: String = url::form_urlencoded::byte_serialize(url.as_bytes()).collect();
    let headed = if headed {
        format!("&{HEADED_PARAM}=1")
    } else {
        String::new()
    };
    format!("&{DRIVE_PARAM}={encoded}{headed}")
}

/// The longest project directory a stream may name, in bytes.
pub const MAX_PROJECT_DIR_BYTES: usize = 4096;

/// The project directory a client process speaks for: `RETICLE_PROJECT_DIR`, else its working
/// directory, made absolute; `None` when neither can be read.
pub fn own_project_dir() -> Option<std::path::PathBuf> {
    let dir = match std::env::var_os(crate::config::env::PROJECT_DIR) {
        Some(dir) if !dir.is_empty() => std::path::PathBuf::from(dir),
        _ => std::env::current_dir().ok()?,
    };
    std::fs::canonicalize(&dir).ok().or(Some(dir))
}

/// `&project=<dir>` for a stream's query, percent-encoded; empty for a directory that is not
/// absolute UTF-8 within [`MAX_PROJECT_DIR_BYTES`] (the daemon's own workspace is used then).
pub fn project_query(dir: Option<&std::path::Path>) -> String {
    let Some(text) = dir.filter(|d| d.is_absolute()).and_then(|d| d.to_str()) else {
        return String::new();
    };
    if text.len() > MAX_PROJECT_DIR_BYTES {
        return String::new();
    }
    let mut encoded = format!("&{PROJECT_PARAM}=");
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            encoded.push(byte as char);
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

/// Where a client posts messages (with `?sessionId=`).
pub const MESSAGE_PATH: &str = "/mcp/message";
/// The stream's first event: its data is the POST path for this session.
pub const ENDPOINT_EVENT: &str = "endpoint";
/// Every JSON-RPC message from the daemon.
pub const MESSAGE_EVENT: &str = "message";
/// Right after the endpoint: `{"session", "instance", "catalogue": {version, hash, tools}}`, so a
/// client knows which daemon life and which catalogue this session belongs to.
pub const SESSION_EVENT: &str = "reticle-session";
/// Sent on every stream before a planned shutdown: `{"reason"}`.
pub const SHUTDOWN_EVENT: &str = "reticle-shutdown";
/// The request header by which a POST to [`MESSAGE_PATH`] asks for its request's answer in its
/// own response when the answer is ready within the daemon's inline wait (`reticle mcp` sends
/// it); its value is [`INLINE_ANSWER`]. Without it, every answer goes on the stream.
pub const INLINE_ANSWER_HEADER: &str = "x-reticle-answer";
/// The value of [`INLINE_ANSWER_HEADER`].
pub const INLINE_ANSWER: &str = "inline";
/// The largest MCP message body a POST to [`MESSAGE_PATH`] may carry.
pub const MAX_MCP_BODY_BYTES: usize = 4 * 1024 * 1024;

/// The MCP side of the daemon: its catalogue, its open protocol sessions, and the shutdown their
/// streams end on.
#[derive(Debug, Clone)]
pub struct McpState {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// The catalogue every session serves; replaced only through [`McpState::replace_catalogue`].
    catalogue: RwLock<Arc<Catalogue>>,
    /// Open sessions by id; a session leaves when its stream ends.
    sessions: Mutex<HashMap<String, Arc<ProtocolSession>>>,
    /// The sessions opened over Streamable HTTP (also in `sessions`), by id.
    http_sessions: Mutex<HashMap<String, Arc<streamable::HttpSession>>>,
    /// The daemon log, for stream open and close lines (absent in unit tests).
    log: Option<Arc<DaemonLog>>,
    /// Tool calls started and not yet answered.
    in_flight: AtomicUsize,
    /// Cancelled when the daemon begins to shut down: every open stream ends on it.
    shutdown: CancellationToken,
    /// The caps on open sessions and running calls.
    limits: McpLimits,
    /// A version skew found with a peer and not yet told: the next tool result carries it
    /// (`version_skew`), once, whichever agent makes the call.
    pending_skew: Mutex<Option<serde_json::Value>>,
}

impl McpState {
    pub fn new(
        catalogue: Catalogue,
        log: Option<Arc<DaemonLog>>,
        shutdown: CancellationToken,
        limits: McpLimits,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                catalogue: RwLock::new(Arc::new(catalogue)),
                sessions: Mutex::new(HashMap::new()),
                http_sessions: Mutex::new(HashMap::new()),
                log,
                in_flight: AtomicUsize::new(0),
                shutdown,
                limits,
                pending_skew: Mutex::new(None),
            }),
        }
    }

    /// Notes a skew with a peer (`pair` and the sentence saying it) for the next tool result.
    pub fn note_skew(&self, pair: crate::wire::skew::Pair, sentence: String) {
        self.log(
            "version_skew",
            json!({ "pair": pair.as_str(), "skew": sentence }),
        );
        *self
            .inner
            .pending_skew
            .lock()
            .unwrap_or_else(|p| p.into_inner()) =
            Some(json!({ "pair": pair.as_str(), "action": sentence }));
    }

    /// The skew not yet told, taken (a tool result carries it once).
    pub fn take_skew(&self) -> Option<serde_json::Value> {
        self.inner
            .pending_skew
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    /// Cancelled when the daemon begins to shut down.
    pub fn shutdown(&self) -> &CancellationToken {
        &self.inner.shutdown
    }

    /// The catalogue in force.
    pub fn catalogue(&self) -> Arc<Catalogue> {
        match self.inner.catalogue.read() {
            Ok(c) => c.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Swaps the catalogue and tells every open session with `notifications/tools/list_changed`,
    /// and a `notifications/message` saying `why` (for a host to show).
    pub async fn replace_catalogue(&self, catalogue: Catalogue, why: &str) {
        let summary = catalogue.summary();
        match self.inner.catalogue.write() {
            Ok(mut c) => *c = Arc::new(catalogue),
            Err(poisoned) => *poisoned.into_inner() = Arc::new(catalogue),
        }
        let line = jsonrpc::notification("notifications/tools/list_changed").to_string();
        let note = logging::message(
            logging::Level::Info,
            "catalogue_changed",
            &format!("Reticle's tool list changed: {why}; the client lists its tools again"),
            json!({ "why": why, "version": summary.version, "hash": summary.hash }),
        );
        for session in self.sessions() {
            session.send(line.clone()).await;
            session.send_log(&note).await;
        }
    }

    /// The caps in force.
    pub fn limits(&self) -> McpLimits {
        self.inner.limits
    }

    /// How many tool calls are running.
    pub fn calls_in_flight(&self) -> usize {
        self.inner.in_flight.load(Ordering::SeqCst)
    }

    /// How many protocol sessions are open.
    pub fn session_count(&self) -> usize {
        self.inner.sessions.lock().map(|s| s.len()).unwrap_or(0)
    }

    fn sessions(&self) -> Vec<Arc<ProtocolSession>> {
        self.inner
            .sessions
            .lock()
            .map(|s| s.values().cloned().collect())
            .unwrap_or_default()
    }

    fn session(&self, id: &str) -> Option<Arc<ProtocolSession>> {
        self.inner.sessions.lock().ok()?.get(id).cloned()
    }

    fn http_session(&self, id: &str) -> Option<Arc<streamable::HttpSession>> {
        self.inner.http_sessions.lock().ok()?.get(id).cloned()
    }

    /// Opens `session` unless the session cap is reached (then the refusal to give). At the cap
    /// the least recently used idle Streamable HTTP session gives way first
    /// ([`streamable::make_room`]): sessions no client closes must not lock an agent out.
    fn register(&self, session: Arc<ProtocolSession>) -> Result<(), String> {
        if self.session_count() >= self.inner.limits.sessions {
            streamable::make_room(self);
        }
        let mut sessions = self
            .inner
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if sessions.len() >= self.inner.limits.sessions {
            return Err(self.inner.limits.sessions_refusal());
        }
        sessions.insert(session.id().to_string(), session);
        Ok(())
    }

    fn deregister(&self, id: &str) {
        if let Ok(mut sessions) = self.inner.sessions.lock() {
            sessions.remove(id);
        }
    }

    fn log(&self, event: &str, fields: serde_json::Value) {
        if let Some(log) = &self.inner.log {
            log.event(event, fields);
        }
    }

    fn log_refusal(&self, session: &str, method: &str, reason: &str) {
        self.log(
            "mcp_call_refused",
            json!({ "session": session, "method": method, "reason": reason }),
        );
    }
}
