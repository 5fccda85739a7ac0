//! The meta family: `reticle_tools` (the catalogue as agents read it), `reticle_run` (any tool by
//! name, run through the chokepoint the call was handed) and `reticle_feedback`. It must not
//! import the chokepoint, the registry or another family.

pub mod feedback;
pub mod run;
pub mod tools;
