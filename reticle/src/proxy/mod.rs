//! `reticle mcp`: the stdio proxy between a coding agent and the daemon, built so the agent's link
//! never goes down. Two processes: the supervisor owns the agent's stdio and every promise on it
//! and holds no socket; the worker (`reticle mcp-worker`) holds every socket on the daemon's port
//! and nothing else, and is restarted whenever it dies, so killing every process with a socket on
//! the port costs the agent at most the calls then in flight, each answered -32001.

// Both processes' start.
pub mod boot;
// The book of owed calls and the -32001 sentences.
pub mod calls;
// The proxy log's event names.
pub mod events;
// `reticle-mcp`, the small executable `reticle mcp` hands over to.
pub mod executable;
// The second pipe, for `posting` reports only, which the supervisor reads without waking
// for it.
pub mod ledger;
// Bounded stdin framing (pure).
pub mod lines;
// The pipe protocol between supervisor and worker.
pub mod link;
// The worker's kept-alive POST connection and which failures prove "not sent".
pub mod post_link;
// The handshake replayed into every daemon session (a pure state machine).
pub mod replay;
// Bounds and the environment that tunes them.
pub mod settings;
// The SSE frame parser (pure).
pub mod sse;
// Lines to the process's own stderr that never fail it.
pub mod stderr;
// The actor on stdio, its states and the populations of lost calls.
pub mod supervisor;
// Probe, spawn, wait, stream, POST.
pub mod worker;

pub use supervisor::run as run_supervisor;
pub use worker::run as run_worker;
