//! The daemon's HTTP plane: one router for every route, behind one guard. Routes are listed in
//! [`router`]; handlers are named `<resource>_<action>`. This room answers requests; it must not
//! own the daemon's lifecycle.

pub mod errors;
pub mod guard;
pub mod status;

use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use tokio_util::sync::CancellationToken;

use crate::auth::PairingToken;
use crate::bridge::{self, Bridge};
use crate::daemon::Activity;

/// Facts about this daemon life, fixed at start.
#[derive(Debug, Clone)]
pub struct DaemonInfo {
    pub version: String,
    pub instance: String,
    pub pid: u32,
    pub port: u16,
    pub started_at: String,
}

/// What every handler can reach.
#[derive(Debug, Clone)]
pub struct AppState {
    pub info: Arc<DaemonInfo>,
    pub activity: Activity,
    /// The pairing token; `None` when none could be provisioned (then only loopback is served).
    pub token: Option<PairingToken>,
    /// Cancelled when the daemon begins to shut down: long-lived streams (SSE, WebSocket) end
    /// on it, so draining never waits on a client.
    pub shutdown: CancellationToken,
    /// The bridge: connected pages and the API that drives them.
    pub bridge: Bridge,
    /// The MCP endpoint: catalogue and open protocol sessions.
    pub mcp: crate::mcp::McpState,
    /// The tool layer's host: call accounting, per-session memory, where tools may write.
    pub tools: Arc<crate::tools::ToolHost>,
}

impl AppState {
    /// What a tool call can reach.
    pub fn tool_context(&self) -> crate::tools::ToolContext {
        crate::tools::ToolContext {
            info: self.info.clone(),
            activity: self.activity.clone(),
            bridge: self.bridge.clone(),
            host: self.tools.clone(),
        }
    }
}

/// The route table.
pub fn router(state: AppState) -> Router {
    let mut routes = Router::new().route("/status", get(status::status_show));
    if crate::config::switch_on(crate::config::env::HARNESS_ROUTES) {
        routes = routes
            .route("/bridge/sessions", get(bridge::routes::sessions_index))
            .route("/bridge/commands", post(bridge::routes::commands_create))
            .route("/bridge/events", get(bridge::routes::events_index));
    }
    routes
        .route(
            crate::mcp::SSE_PATH,
            get(crate::mcp::transport::mcp_sse_open),
        )
        .route(
            crate::mcp::MESSAGE_PATH,
            post(crate::mcp::transport::mcp_message_post)
                .layer(DefaultBodyLimit::max(crate::mcp::MAX_MCP_BODY_BYTES)),
        )
        .fallback(errors::not_found)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::loopback_or_token,
        ))
        // Added after the guard so it is not behind it: a page cannot send headers, so the
        // bridge applies its own tiers (Origin at the upgrade, the token in the hello).
        .route("/reticle", get(bridge::routes::socket_upgrade))
        .with_state(state)
}
