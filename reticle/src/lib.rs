//! Reticle: a dev-only, localhost-only verification layer for AI coding agents.
//!
//! # Layout
//! - [`config`]: the environment and port vocabulary, resolved once and imported everywhere.
//! - [`wire`]: message shapes shared by the daemon and its clients (the `/status` report,
//!   protocol 1's messages, vocabulary and limits).
//! - [`daemon`]: the long-lived process: settings, state dir, port lock, pid file, log,
//!   heartbeat, idle shutdown, signals and how it is spawned.
//! - [`assembly`]: one daemon life: claims the port, puts the rooms together and serves the
//!   router it is handed.
//! - [`http`]: the daemon's HTTP router (`/status`, the MCP and bridge routes) and its
//!   loopback/token guard: the top layer, handed to [`assembly::run`] by the CLI.
//! - [`http_get`]: a small HTTP/1.1 GET client (the proxy's daemon stream, the `/status` probe).
//! - [`plane`]: what every room answering HTTP shares: loopback recognition, the refusal body.
//! - [`mcp`]: the daemon's MCP endpoint (SSE + POST) and the JSON-RPC/handshake pieces the proxy
//!   shares.
//! - [`proxy`]: `reticle mcp`, the stdio proxy that keeps an agent's link up whatever happens to
//!   the daemon (a supervisor on stdio, a worker holding the daemon link).
//! - [`tools`]: the tool catalogue and `run_tool`, the one chokepoint for every tool call.
//! - [`flow`]: the flow domain below the tools and `reticle verify`: steps, flows, the flow
//!   store, run artifacts and the suite verdict.
//! - [`auth`]: the pairing token.
//! - [`bridge`]: the WebSocket bridge pages connect to, their sessions, and the API that drives
//!   them.
//! - [`probe`]: client-side port truth: presence (`daemon`/`foreign`/`free`), port holders, and
//!   the sentences naming what is in the way (shared by the CLI and the proxy).
//! - [`store`]: atomic writes and bounded directories for `.reticle/` and the state dir.
//! - [`trace`]: `RETICLE_TRACE` span lines in the daemon log.
//! - [`verdict`]: predicates, their evaluation over a window and the page, and the verdict.
//! - [`wiring`]: an app's dev stack and the development-only snippet that loads the served SDK
//!   (written by `reticle init --write`, read by `reticle doctor` and `reticle_sessions`).
//! - [`cli`]: the `reticle` command line.
//!
//! Dependencies point one way (bottom: `wire`, `config`, `store`, `verdict`, `plane`, `http_get`,
//! `wiring`; top: `http`
//! and `cli`); the rank table and its check are in `reticle/tests/layering.rs`.

pub mod assembly;
pub mod auth;
pub mod bridge;
pub mod cli;
pub mod config;
pub mod daemon;
pub mod flow;
pub mod http;
pub mod http_get;
pub mod mcp;
pub mod plane;
pub mod probe;
pub mod proxy;
pub mod store;
pub mod tools;
pub mod trace;
pub mod verdict;
pub mod wire;
pub mod wiring;

/// The product version, as reported by `/status` and `reticle version`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A hash of the sources this build was made from (`build.rs`): equal in `reticle` and
/// `reticle-mcp` exactly when they were built from the same code.
pub const BUILD_ID: &str = env!("RETICLE_BUILD_ID");
