//! The driving family: the tools that need a page under Reticle's control (a tab of a driven
//! browser, reached over DevTools) or stand for one of its habits: `reticle_viewport` and
//! `reticle_refresh`. A file here may use the leaves of `tools`; it must not import the
//! chokepoint, the registry or another family.

pub mod refresh;
pub mod viewport;
