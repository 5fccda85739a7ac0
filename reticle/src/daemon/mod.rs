//! The daemon's life: where its files live, how it claims a port, what it logs, how it beats,
//! when it goes idle, which runtime it runs on, how it starts (in the foreground or detached)
//! and how it ends.
//!
//! This room owns the process. Its [`run`] is the one place that assembles the rooms (bridge, MCP
//! endpoint, tools) into a daemon life and serves the router its caller hands it; the rest of
//! the room sits below those rooms, and no part of it imports [`crate::http`].

pub mod activity;
pub mod events;
pub mod heartbeat;
pub mod idle;
pub mod info;
pub mod life;
pub mod lock;
pub mod log;
pub mod run;
pub mod runtime;
pub mod spawn;
pub mod state;

pub use activity::Activity;
pub use info::DaemonInfo;
pub use life::{LastExit, Life, LifeEnd};
pub use log::DaemonLog;
pub use state::{PortFiles, StateDir};
