//! The bridge (hops 4 and 5, daemon side): the WebSocket at `GET /reticle` that pages connect to,
//! the sessions they make, and the API the tool layer calls to drive them. The wire shapes, limits
//! and close codes are [`crate::wire`]'s; this room must not redefine them. It must not decide
//! verdicts: an answer, a refusal by the page and a lost observation are handed up as three things.

// The bridge's settings from the environment.
pub mod config;
// One socket from upgrade to close: handshake, limits, read and write loops.
pub mod connection;
// What a parsed event holds in memory, which the ring bounds.
pub mod footprint;
// The upgrade's auth tier (which Origins may connect).
pub mod origin;
// The per-socket event rate cap.
pub mod rate;
// `Bridge`, the session registry and the tool layer's API: list sessions, resolve one,
// send a command and await its result, read events since a cursor.
pub mod registry;
// The per-session event buffer and its cursors.
pub mod ring;
// `GET /reticle` and the `/bridge/*` HTTP routes.
pub mod routes;
// One connected page: identity, current socket, pending commands, events.
pub mod session;

pub use config::BridgeConfig;
pub use registry::{Bridge, BridgeError, RecordedFlow, ResolveError};
pub use ring::{RingLimits, StoredEvent};
pub use session::{Answer, CommandError, Cursor, EventsRead, Reply, Session};
