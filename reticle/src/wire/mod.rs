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
// A store path in the dotted form every protocol 1 page reads.
pub mod state_path;
// The `/status` report.
pub mod status;
// The trace line's event, keys and span names (read by trace checkers).
pub mod trace;
// Protocol 1's command names and event types.
pub mod vocabulary;

pub use close::CloseReason;
pub use messages::{Command, CommandResult, DecodeError, Event, EventMessage, Hello, Message};
pub use status::{CatalogueSummary, McpSessions, RefusedPage, SessionSummary, StatusReport};
pub use vocabulary::{CommandName, EventFamily, EventType, KnownEventType};
