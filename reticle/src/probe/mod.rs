//! Client-side truth about a port, for the CLI, the proxy and the harness: a Reticle daemon
//! answering, something else holding it, or free; which processes hold it; whether it is in the
//! ephemeral range; the sentences naming what stands in the way ([`obstacles`]); and whether a
//! holder may be a dying process's socket ([`no_live_holder`]).
//!
//! Probes are bounded and read-only; it must never signal a process.

pub mod ephemeral;
pub mod holders;
pub mod obstacles;
pub mod presence;

pub use holders::{
    OutboundConnections, PORT_SETTLE, PORT_SETTLE_POLL, PortHolder, SocketRole, holders, listeners,
    no_live_holder,
};
pub use presence::{PortPresence, PresenceKind, fetch_status, probe};
