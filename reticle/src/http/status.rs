//! `GET /status`: the daemon's proof of life and identity.

use axum::Json;
use axum::extract::State;

use crate::assembly::AppState;
use crate::daemon::activity::Holder;
use crate::wire::{McpSessions, StatusReport};

/// Answers who this daemon is and what is connected to it.
pub async fn status_show(State(state): State<AppState>) -> Json<StatusReport> {
    let info = &state.info;
    Json(StatusReport {
        running: true,
        version: info.version.clone(),
        contract: crate::wire::CONTRACT.to_string(),
        instance: info.instance.clone(),
        pid: info.pid,
        port: info.port,
        started_at: info.started_at.clone(),
        session_count: state.bridge.session_count(),
        sessions: state.bridge.summaries(),
        refused: state.bridge.refused(),
        agent_count: state.activity.count(Holder::Agent),
        calls_in_flight: state.mcp.calls_in_flight(),
        mcp_sessions: Some(McpSessions {
            open: state.mcp.session_count(),
            cap: state.mcp.limits().sessions,
        }),
        catalogue: Some(state.mcp.catalogue().summary()),
        tool_calls: Some(state.tools.stats.summary()),
        workspace: Some(state.tools.workspace.root().display().to_string()),
    })
}
