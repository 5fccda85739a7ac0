//! `reticle mcp`: the stdio proxy between a coding agent and the daemon, built so the agent's
//! link never goes down.
//!
//! Two processes. The supervisor ([`supervisor`]) owns the agent's stdin and stdout, every
//! promise made on them (each request answered exactly once), the state machine, the handshake
//! it replays into each daemon session, the catalogue cache and the log; it holds no socket. The
//! worker ([`worker`], the hidden `reticle mcp-worker`) holds every socket on the daemon's port
//! and nothing else; the supervisor restarts it whenever it dies, so killing every process with
//! a socket on the port (`lsof -ti tcp:PORT | xargs kill -9`) costs the agent at most the calls
//! then in flight, each answered -32001.
//!
//! # Layout
//! - [`supervisor`]: the actor on stdio, its states and the populations of lost calls.
//! - [`replay`]: the handshake replayed into every daemon session (a pure state machine).
//! - [`worker`]: probe, spawn, wait, stream, POST.
//! - [`link`]: the pipe protocol between them; [`ledger`]: the second pipe, for `posting` reports
//!   only, which the supervisor reads without waking for it.
//! - [`post_link`]: the worker's kept-alive POST connection and which failures prove "not sent".
//! - [`calls`]: the book of owed calls and the -32001 sentences.
//! - [`events`]: the proxy log's event names.
//! - [`lines`], [`sse`]: bounded stdin framing and the SSE frame parser (pure).
//! - [`settings`]: bounds and the environment that tunes them; [`boot`]: both processes' start.
//! - [`executable`]: `reticle-mcp`, the small executable `reticle mcp` hands over to.
//! - [`stderr`]: lines to the process's own stderr that never fail it.

pub mod boot;
pub mod calls;
pub mod events;
pub mod executable;
pub mod ledger;
pub mod lines;
pub mod link;
pub mod post_link;
pub mod replay;
pub mod settings;
pub mod sse;
pub mod stderr;
pub mod supervisor;
pub mod worker;

pub use supervisor::run as run_supervisor;
pub use worker::run as run_worker;
