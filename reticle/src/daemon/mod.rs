//! The daemon process: its settings, state dir, port lock, log, activity, heartbeat, idle
//! shutdown, signals, runtime and how it is spawned. A leaf below every serving room: it must
//! not import the bridge, tools, MCP or the assembly ([`crate::assembly`] builds a life from it).

pub mod activity;
pub mod events;
pub mod heartbeat;
pub mod idle;
pub mod info;
pub mod life;
pub mod lock;
pub mod log;
pub mod panic_hook;
pub mod runtime;
pub mod settings;
pub mod signals;
pub mod spawn;
pub mod state;

pub use activity::Activity;
pub use info::DaemonInfo;
pub use life::{LastExit, Life, LifeEnd};
pub use log::DaemonLog;
pub use settings::Settings;
pub use state::{PortFiles, StateDir};
