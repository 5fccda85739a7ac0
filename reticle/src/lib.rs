//! Reticle: a dev-only, localhost-only verification layer for AI coding agents.
//!
//! Dependencies between the rooms below point one way (bottom: `wire`, `config`, `store`,
//! `verdict`, `plane`, `http_get`, `wiring`; top: `http` and `cli`); the rank table and its check
//! are in `reticle/tests/layering.rs`.

// One daemon life: claims the port, puts the rooms together and serves the router it
// is handed.
pub mod assembly;
// The pairing token.
pub mod auth;
// The WebSocket bridge pages connect to, their sessions, and the API that drives them.
pub mod bridge;
// The Chromium Reticle launches (under a keeper that ties it to its launcher) or attaches to.
pub mod chromium;
// The `reticle` command line.
pub mod cli;
// The browser the daemon drives: tabs it opened, the SDK it injects into a page without one.
pub mod drive;
// The environment and port vocabulary, resolved once and imported everywhere.
pub mod config;
// The long-lived process: settings, state dir, port lock, pid file, log, heartbeat, idle
// shutdown, signals and how it is spawned.
pub mod daemon;
// The flow domain below the tools and `reticle verify`: steps, flows, the flow store, run
// artifacts and the suite verdict.
pub mod flow;
// The daemon's HTTP router (`/status`, the MCP and bridge routes) and its loopback/token
// guard: the top layer, handed to `assembly::run` by the CLI.
pub mod http;
// A small HTTP/1.1 GET client (the proxy's daemon stream, the `/status` probe).
pub mod http_get;
// The daemon's MCP endpoint (SSE + POST) and the JSON-RPC/handshake pieces the proxy shares.
pub mod mcp;
// What every room answering HTTP shares: loopback recognition, the refusal body.
pub mod plane;
// Client-side port truth: presence (`daemon`/`foreign`/`free`), port holders, and the
// sentences naming what is in the way (shared by the CLI and the proxy).
pub mod probe;
// `reticle mcp`, the stdio proxy that keeps an agent's link up whatever happens to the
// daemon (a supervisor on stdio, a worker holding the daemon link).
pub mod proxy;
// Atomic writes and bounded directories for `.reticle/` and the state dir.
pub mod store;
// The tool catalogue and `run_tool`, the one chokepoint for every tool call.
pub mod tools;
// `RETICLE_TRACE` span lines in the daemon log.
pub mod trace;
// Predicates, their evaluation over a window and the page, and the verdict.
pub mod verdict;
// Message shapes shared by the daemon and its clients (the `/status` report, protocol
// 1's messages, vocabulary and limits).
pub mod wire;
// An app's dev stack and the development-only snippet that loads the served SDK
// (written by `reticle init --write`, read by `reticle doctor` and `reticle_sessions`).
pub mod wiring;

/// The product version, as reported by `/status` and `reticle version`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A hash of the sources this build was made from (`build.rs`): equal in `reticle` and
/// `reticle-mcp` exactly when they were built from the same code.
pub const BUILD_ID: &str = env!("RETICLE_BUILD_ID");
