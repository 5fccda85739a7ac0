//! The sessions family: `reticle_sessions` (which pages are connected, and when none, why and
//! what to do next: `next_action`) and `reticle_session` (sharing the page with its human). It
//! must not import the chokepoint, the registry or another family.

mod launch;
mod next_action;
pub mod session;
// Named for its tool, `reticle_sessions`, as every tool's file is.
#[allow(clippy::module_inception)]
pub mod sessions;
pub mod wait_ready;
