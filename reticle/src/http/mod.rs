//! The daemon's HTTP plane: one router for every route, behind the page check ([`cross_site`])
//! and one guard, every refusal in the one body ([`errors`]). Routes are listed in [`router`]; handlers are named `<resource>_<action>`, and
//! each takes only the substate it needs (`State<Bridge>`, `State<McpState>`,
//! `State<ToolContext>`, drawn from the daemon's [`AppState`]). The top layer: [`crate::assembly`] assembles the state and is handed
//! [`router`] by the CLI, so no room below imports this one. It answers requests; it must not
//! own the daemon's lifecycle.

pub mod cross_site;
pub mod errors;
pub mod guard;
pub mod sdk;
pub mod status;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};

use crate::assembly::AppState;
use crate::bridge;

/// The route table over the rooms a daemon life assembled.
pub fn router(state: AppState) -> Router {
    let mut routes = Router::new()
        .route("/status", get(status::status_show))
        .route("/sdk/reticle.js", get(sdk::sdk_entry_show))
        .route("/sdk/pairing", get(sdk::sdk_pairing_show))
        .route("/sdk/{tag}/{*path}", get(sdk::sdk_module_show));
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
        .route(
            crate::mcp::streamable::STREAMABLE_PATH,
            post(crate::mcp::streamable::mcp_streamable_post)
                .delete(crate::mcp::streamable::mcp_streamable_delete)
                .get(crate::mcp::streamable::mcp_streamable_get)
                .layer(DefaultBodyLimit::max(crate::mcp::MAX_MCP_BODY_BYTES)),
        )
        .fallback(errors::not_found)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::loopback_or_token,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            cross_site::refuse_foreign_pages,
        ))
        // Added after the guard and the page check so it is behind neither: a page cannot send
        // headers, so the bridge applies its own tiers (Origin at the upgrade, the token in the hello).
        .route("/reticle", get(bridge::routes::socket_upgrade))
        .layer(axum::middleware::map_response(errors::structured_refusals))
        .with_state(state)
}
