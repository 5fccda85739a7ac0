//! The one route table: every path the daemon serves, its methods and handlers, and where it sits
//! (behind the guard or not, harness-only or not). The router ([`super::router`]) and the 404
//! sentence ([`super::errors`]) both read it, so neither can name a route the other lacks. It
//! lists routes; it must not handle a request.

use std::sync::LazyLock;

use axum::extract::DefaultBodyLimit;
use axum::routing::{MethodFilter, MethodRouter, on};

use super::{sdk, status};
use crate::assembly::AppState;
use crate::bridge;
use crate::config::env;
use crate::mcp::{self, streamable, transport};
use crate::wire::limits::WS_PATH;
use crate::wire::status::STATUS_PATH;

/// An HTTP method a route answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Get,
    Post,
    Delete,
}

impl Verb {
    /// How the method is written in a request line.
    pub const fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "GET",
            Verb::Post => "POST",
            Verb::Delete => "DELETE",
        }
    }

    fn filter(self) -> MethodFilter {
        match self {
            Verb::Get => MethodFilter::GET,
            Verb::Post => MethodFilter::POST,
            Verb::Delete => MethodFilter::DELETE,
        }
    }
}

/// Who may reach a route, and when it exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Behind the page check and the loopback-or-token guard.
    Guarded,
    /// Routed only when the daemon starts with `RETICLE_HARNESS_ROUTES=1`; guarded too.
    Harness,
    /// Outside the guard: the bridge's socket applies its own tiers (Origin at the upgrade, the
    /// token in the hello), because a page cannot send headers.
    Bridge,
}

/// A handler for one method, given the method filter to answer on.
pub type Handler = fn(MethodFilter) -> MethodRouter<AppState>;

/// One row of the table.
pub struct Route {
    /// The path as the router matches it (`{name}` one segment, `{*name}` the rest).
    pub path: &'static str,
    pub methods: &'static [(Verb, Handler)],
    pub reach: Reach,
    /// The largest body a request may carry, when it is not the framework's default.
    pub body_limit: Option<usize>,
    /// A few words for the 404 sentence, when the path alone does not say what it is.
    pub note: Option<&'static str>,
}

/// Every route the daemon serves.
pub const ROUTES: &[Route] = &[
    Route {
        path: STATUS_PATH,
        methods: &[(Verb::Get, |f| on(f, status::status_show))],
        reach: Reach::Guarded,
        body_limit: None,
        note: None,
    },
    Route {
        path: mcp::SSE_PATH,
        methods: &[(Verb::Get, |f| on(f, transport::mcp_sse_open))],
        reach: Reach::Guarded,
        body_limit: None,
        note: None,
    },
    Route {
        path: mcp::MESSAGE_PATH,
        methods: &[(Verb::Post, |f| on(f, transport::mcp_message_post))],
        reach: Reach::Guarded,
        body_limit: Some(mcp::MAX_MCP_BODY_BYTES),
        note: None,
    },
    Route {
        path: streamable::STREAMABLE_PATH,
        methods: &[
            (Verb::Post, |f| on(f, streamable::mcp_streamable_post)),
            (Verb::Get, |f| on(f, streamable::mcp_streamable_get)),
            (Verb::Delete, |f| on(f, streamable::mcp_streamable_delete)),
        ],
        reach: Reach::Guarded,
        body_limit: Some(mcp::MAX_MCP_BODY_BYTES),
        note: Some("Streamable HTTP"),
    },
    Route {
        path: WS_PATH,
        methods: &[(Verb::Get, |f| on(f, bridge::routes::socket_upgrade))],
        reach: Reach::Bridge,
        body_limit: None,
        note: Some("the pages' WebSocket"),
    },
    Route {
        path: "/sdk/reticle.js",
        methods: &[(Verb::Get, |f| on(f, sdk::sdk_entry_show))],
        reach: Reach::Guarded,
        body_limit: None,
        note: None,
    },
    Route {
        path: "/sdk/pairing",
        methods: &[(Verb::Get, |f| on(f, sdk::sdk_pairing_show))],
        reach: Reach::Guarded,
        body_limit: None,
        note: None,
    },
    Route {
        path: "/sdk/{tag}/{*path}",
        methods: &[(Verb::Get, |f| on(f, sdk::sdk_module_show))],
        reach: Reach::Guarded,
        body_limit: None,
        note: Some("the SDK's modules"),
    },
    Route {
        path: "/bridge/sessions",
        methods: &[(Verb::Get, |f| on(f, bridge::routes::sessions_index))],
        reach: Reach::Harness,
        body_limit: None,
        note: None,
    },
    Route {
        path: "/bridge/commands",
        methods: &[(Verb::Post, |f| on(f, bridge::routes::commands_create))],
        reach: Reach::Harness,
        body_limit: None,
        note: None,
    },
    Route {
        path: "/bridge/events",
        methods: &[(Verb::Get, |f| on(f, bridge::routes::events_index))],
        reach: Reach::Harness,
        body_limit: None,
        note: None,
    },
];

impl Route {
    /// The route's methods joined into one method router, with its body limit.
    pub fn service(&self) -> MethodRouter<AppState> {
        let mut service = MethodRouter::new();
        for (verb, handler) in self.methods {
            service = service.merge(handler(verb.filter()));
        }
        match self.body_limit {
            Some(bytes) => service.layer(DefaultBodyLimit::max(bytes)),
            None => service,
        }
    }

    /// How the 404 sentence names the route: `GET /status`, `POST, GET, DELETE /mcp (…)`.
    pub fn described(&self) -> String {
        let verbs: Vec<&str> = self.methods.iter().map(|(v, _)| v.as_str()).collect();
        let mut text = format!("{} {}", verbs.join(", "), self.path);
        if let Some(note) = self.note {
            text.push_str(&format!(" ({note})"));
        }
        text
    }
}

/// The sentence a request for no route is answered with, naming every route in `routes`.
pub fn not_found_sentence(routes: &[Route]) -> String {
    let list = |reach: fn(Reach) -> bool| {
        routes
            .iter()
            .filter(|r| reach(r.reach))
            .map(Route::described)
            .collect::<Vec<_>>()
            .join("; ")
    };
    format!(
        "no such route on a Reticle daemon (routes: {}; and, only when the daemon starts with {}=1, the harness routes: {})",
        list(|r| r != Reach::Harness),
        env::HARNESS_ROUTES,
        list(|r| r == Reach::Harness)
    )
}

/// [`not_found_sentence`] over [`ROUTES`], worded once.
pub static NOT_FOUND: LazyLock<String> = LazyLock::new(|| not_found_sentence(ROUTES));

#[cfg(test)]
mod tests {
    use super::*;

    /// The routes of `routes` (by their description) that `sentence` does not name.
    fn unnamed<'a>(sentence: &str, routes: &'a [Route]) -> Vec<&'a str> {
        routes
            .iter()
            .filter(|r| !sentence.contains(&r.described()))
            .map(|r| r.path)
            .collect()
    }

    #[test]
    fn the_404_sentence_names_every_routed_path_and_method() {
        assert_eq!(
            unnamed(&NOT_FOUND, ROUTES),
            Vec::<&str>::new(),
            "{}",
            *NOT_FOUND
        );
        for needed in [
            "GET /sdk/pairing",
            "POST, GET, DELETE /mcp (Streamable HTTP)",
            "GET /reticle",
            "RETICLE_HARNESS_ROUTES=1",
        ] {
            assert!(NOT_FOUND.contains(needed), "{needed}: {}", *NOT_FOUND);
        }
    }

    #[test]
    fn control_the_hand_written_sentence_that_drifted_is_caught() {
        // The sentence as it was written by hand before the table: it had lost GET and DELETE
        // /mcp, /sdk/pairing and the SDK's modules.
        let drifted = "no such route on a Reticle daemon (routes: GET /status, GET /mcp/sse, POST /mcp/message, POST /mcp (Streamable HTTP), GET /reticle, GET /sdk/reticle.js; the harness routes GET /bridge/sessions, POST /bridge/commands and GET /bridge/events exist only when the daemon starts with RETICLE_HARNESS_ROUTES=1)";
        assert_eq!(
            unnamed(drifted, ROUTES),
            vec!["/mcp", "/reticle", "/sdk/pairing", "/sdk/{tag}/{*path}"]
        );
    }

    #[test]
    fn every_path_is_routed_once() {
        let mut paths: Vec<&str> = ROUTES.iter().map(|r| r.path).collect();
        paths.sort();
        paths.dedup();
        assert_eq!(paths.len(), ROUTES.len());
    }
}
