//! The driving family: the tools that need a page under Reticle's control (a tab of a driven
//! browser, reached over DevTools) or stand for one of its habits: `reticle_viewport`,
//! `reticle_network_mock` and `reticle_refresh`. A file here may use the leaves of `tools`; it
//! must not import the chokepoint, the registry or another family.

pub mod network_mock;
pub mod refresh;
pub mod viewport;
