//! Client-side truth about a port, for the CLI, the proxy and the harness: is a Reticle daemon
//! answering there, is something else holding it, or is it free; and which processes hold it.
//! Probes are bounded and read-only; this module must never signal a process.

pub mod holders;
pub mod presence;

pub use holders::{PortHolder, SocketRole, holders, listeners};
pub use presence::{PortPresence, PresenceKind, fetch_status, probe};
