//! The daemon's HTTP plane: one router for every route, behind the page check ([`cross_site`])
//! and one guard, every refusal in the one body ([`errors`]). Routes are listed once, in [`routes`]; handlers are named `<resource>_<action>`, and
//! each takes only the substate it needs (`State<Bridge>`, `State<McpState>`,
//! `State<ToolContext>`, drawn from the daemon's [`AppState`]). The top layer: [`crate::assembly`] assembles the state and is handed
//! [`router`] by the CLI, so no room below imports this one. It answers requests; it must not
//! own the daemon's lifecycle.

pub mod cross_site;
pub mod errors;
pub mod guard;
pub mod routes;
pub mod sdk;
pub mod status;

use axum::Router;

use crate::assembly::AppState;
use crate::config::{self, env};
use routes::{ROUTES, Reach};

/// The router over the rooms a daemon life assembled, built from [`routes::ROUTES`].
pub fn router(state: AppState) -> Router {
    let harness = config::switch_on(env::HARNESS_ROUTES);
    let mut guarded = Router::new();
    for route in ROUTES {
        let routed = match route.reach {
            Reach::Guarded => true,
            Reach::Harness => harness,
            Reach::Bridge => false,
        };
        if routed {
            guarded = guarded.route(route.path, route.service());
        }
    }
    let mut app = guarded
        .fallback(errors::not_found)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::loopback_or_token,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            cross_site::refuse_foreign_pages,
        ));
    // Added after the guard and the page check so they are behind neither.
    for route in ROUTES.iter().filter(|r| r.reach == Reach::Bridge) {
        app = app.route(route.path, route.service());
    }
    app.layer(axum::middleware::map_response(errors::structured_refusals))
        .with_state(state)
}
