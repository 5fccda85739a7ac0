//! Message shapes shared by the daemon and everything that talks to it. Defined once here and
//! imported; nothing in this module performs I/O.
//!
//! - [`status`]: the `/status` report.
//! - [`messages`]: protocol 1's four message kinds, decoding and checking.
//! - [`vocabulary`]: protocol 1's command names and event types.
//! - [`args`]: protocol 1's argument words (`act` actions, `snapshot` modes).
//! - [`limits`]: protocol 1's version, limits and transport bounds.
//! - [`close`]: why the bridge closes a socket, with its close code and reason.
//! - [`state_path`]: a store path in the dotted form every protocol 1 page reads.
//! - [`session_param`]: the `__reticle_session` URL parameter a page takes its session id from.
//! - [`trace`]: the trace line's event, keys and span names (read by trace checkers).
//!
//! `fixtures/` holds golden messages that the daemon's and the SDK's tests both read.

pub mod args;
pub mod close;
pub mod limits;
pub mod messages;
pub mod session_param;
pub mod state_path;
pub mod status;
pub mod trace;
pub mod vocabulary;

pub use close::CloseReason;
pub use messages::{Command, CommandResult, DecodeError, Event, EventMessage, Hello, Message};
pub use status::{CatalogueSummary, McpSessions, RefusedPage, SessionSummary, StatusReport};
pub use vocabulary::{CommandName, EventFamily, EventType, KnownEventType};
