//! The Chromium Reticle starts or attaches to: one launcher for `reticle verify` and for the
//! browser the daemon drives (`launch`), and the keeper process that ties a launched browser's
//! life to its launcher's, so no browser or profile outlives it even when it is killed (`keeper`).
//!
//! It launches, attaches and opens tabs; it must not talk to the daemon or know its sessions.

pub mod keeper;
pub mod launch;

pub use launch::{Chromium, FlowPage, LaunchSpec, chromium_path};
