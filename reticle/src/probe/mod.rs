//! Client-side truth about a port, for the CLI, the proxy and the harness: is a Reticle daemon
//! answering there, is something else holding it (a listener, or a connection whose local end it
//! is), or is it free; which processes hold it; whether it lies in the kernel's ephemeral range;
//! and, in [`obstacles`], the sentences naming what stands in the way (a foreign holder, an
//! outgoing connection, a daemon that failed to start).
//! Whether what holds a port may be a dying process's socket that frees itself ([`no_live_holder`]).
//! Probes are bounded and read-only; this module must never signal a process.

pub mod ephemeral;
pub mod holders;
pub mod obstacles;
pub mod presence;

pub use holders::{
    OutboundConnections, PORT_SETTLE, PORT_SETTLE_POLL, PortHolder, SocketRole, holders, listeners,
    no_live_holder,
};
pub use presence::{PortPresence, PresenceKind, fetch_status, probe};
