//! The bridge (hops 4 and 5, daemon side): the WebSocket at `GET /reticle` that pages connect to,
//! the sessions they make, and the API the tool layer calls to drive them.
//!
//! # Layout
//! - [`registry`]: [`Bridge`], the session registry and the tool layer's API: list sessions,
//!   resolve one, send a command and await its result, read events since a cursor.
//! - [`session`]: one connected page: identity, current socket, pending commands, events.
//! - [`connection`]: one socket from upgrade to close: handshake, limits, read and write loops.
//! - [`origin`]: the upgrade's auth tier (which Origins may connect).
//! - [`ring`]: the per-session event buffer and its cursors.
//! - [`footprint`]: what a parsed event holds in memory, which the ring bounds.
//! - [`rate`]: the per-socket event rate cap.
//! - [`config`]: the bridge's settings from the environment.
//! - [`routes`]: `GET /reticle` and the `/bridge/*` HTTP routes.
//!
//! The wire shapes, limits and close codes are [`crate::wire`]'s; this room must not redefine
//! them. It must not decide verdicts: an answer, a refusal by the page and a lost observation
//! are handed up as three different things.

pub mod config;
pub mod connection;
pub mod footprint;
pub mod origin;
pub mod rate;
pub mod registry;
pub mod ring;
pub mod routes;
pub mod session;

pub use config::BridgeConfig;
pub use registry::{Bridge, BridgeError, RecordedFlow, ResolveError};
pub use ring::{RingLimits, StoredEvent};
pub use session::{Answer, CommandError, Cursor, EventsRead, Reply, Session};
