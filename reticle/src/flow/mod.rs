//! The flow domain, below the tools and the `reticle verify` command that both use it: a step's
//! shape ([`step`]), what a flow is and how much it proves ([`model`]), what a flow or a capsule
//! must not keep ([`redact`]), reading saved flows ([`store`]), the run artifact and its
//! renderings ([`runs`]) and the suite verdict ([`suite`]). It must not drive a page, speak a
//! transport or know a tool.

pub mod model;
pub mod redact;
pub mod runs;
pub mod step;
pub mod store;
pub mod suite;
