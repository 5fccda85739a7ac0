//! The page family: the tools that look at a page, act on it, read its timeline, check it and
//! keep its baselines, one file per tool (plus `timeline` and `waiting`, which several share).
//! A file here may use the leaves of `tools`; it must not import the chokepoint, the registry
//! or another family.

pub mod act;
pub mod act_and_wait;
pub mod act_sequence;
pub mod assert;
pub mod baseline;
pub mod capabilities;
pub mod clock;
pub mod console;
pub mod inspect;
pub mod navigate;
pub mod network;
pub mod observe;
pub mod query;
pub mod snapshot;
pub mod state;
mod timeline;
pub mod wait_for;
mod waiting;
