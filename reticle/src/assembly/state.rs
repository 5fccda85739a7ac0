//! The state of one assembled daemon life, and the substates a handler draws from it. It holds
//! the rooms; it must not build them (that is [`super::run`]).

use std::sync::Arc;

use axum::Router;
use axum::extract::FromRef;
use tokio_util::sync::CancellationToken;

use crate::auth::PairingToken;
use crate::bridge::Bridge;
use crate::daemon::{Activity, DaemonInfo};
use crate::mcp::McpState;
use crate::tools::{ToolContext, ToolHost};

/// The rooms of one daemon life, assembled: what the router serves. A handler takes the substate
/// it needs (`State<Bridge>`, `State<McpState>`, `State<ToolContext>`), not this whole.
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
    pub mcp: McpState,
    /// The tool layer's host: call accounting, per-session memory, where tools may write.
    pub tools: Arc<ToolHost>,
}

impl FromRef<AppState> for Bridge {
    fn from_ref(state: &AppState) -> Self {
        state.bridge.clone()
    }
}

impl FromRef<AppState> for McpState {
    fn from_ref(state: &AppState) -> Self {
        state.mcp.clone()
    }
}

/// What a tool call can reach.
impl FromRef<AppState> for ToolContext {
    fn from_ref(state: &AppState) -> Self {
        ToolContext {
            info: state.info.clone(),
            activity: state.activity.clone(),
            bridge: state.bridge.clone(),
            host: state.tools.clone(),
            caller: None,
            project: None,
            progress: Default::default(),
        }
    }
}

/// Builds the router over an assembled daemon life (the CLI hands in `http::router`).
pub type RouterOver = fn(AppState) -> Router;
