//! The daemon's life: where its files live, how it claims a port, what it logs, how it beats,
//! when it goes idle, how it starts (in the foreground or detached) and how it ends.
//!
//! This room owns the process; it must not know the HTTP routes beyond handing the listener to
//! [`crate::http`].

pub mod activity;
pub mod events;
pub mod heartbeat;
pub mod idle;
pub mod life;
pub mod lock;
pub mod log;
pub mod run;
pub mod spawn;
pub mod state;

pub use activity::Activity;
pub use life::{LastExit, Life, LifeEnd};
pub use log::DaemonLog;
pub use state::{PortFiles, StateDir};
