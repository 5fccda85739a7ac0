//! The assembly: where the rooms (bridge, MCP endpoint, tools) are put together into one daemon
//! life and the router its caller hands in is served. It sits above every serving room and
//! below `http` and `cli`; it must not know the routes (the router is a parameter), and no room
//! below imports it.

pub mod port_claim;
pub mod run;
pub mod state;

pub use run::{ExitReason, run};
pub use state::{AppState, RouterOver};
