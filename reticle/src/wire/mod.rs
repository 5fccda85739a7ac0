//! Message shapes shared by the daemon and everything that talks to it. Defined once here and
//! imported; nothing in this module performs I/O. `fixtures/` holds golden messages that the
//! daemon's and the SDK's tests both read.

// Protocol 1's argument words (`act` actions, `snapshot` modes).
pub mod args;
// Why the bridge closes a socket, with its close code and reason.
pub mod close;
// Protocol 1's version, limits and transport bounds.
pub mod limits;
// Protocol 1's four message kinds, decoding and checking.
pub mod messages;
pub mod session_param;
// Version skew: how a peer on another build or wire contract is described, and what fixes it.
pub mod skew;
// A store path in the dotted form every protocol 1 page reads.
pub mod state_path;
// The `/status` report.
pub mod status;
// The trace line's event, keys and span names (read by trace checkers).
pub mod trace;
// Protocol 1's command names and event types.
pub mod vocabulary;

/// This build's wire contract: a fingerprint of the golden messages' field names (`fixtures/`,
/// computed by build.rs), the same in the SDK's `WIRE_CONTRACT` (checked by the drift test). Two
/// builds with one contract read each other's messages; the version alone says nothing of that.
pub const CONTRACT: &str = env!("RETICLE_WIRE_CONTRACT");

pub use close::CloseReason;
pub use messages::{Command, CommandResult, DecodeError, Event, EventMessage, Hello, Message};
pub use status::{CatalogueSummary, McpSessions, RefusedPage, SessionSummary, StatusReport};
pub use vocabulary::{CommandName, EventFamily, EventType, KnownEventType};
