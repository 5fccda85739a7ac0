//! The tool layer: every tool, and [`run_tool`], the one chokepoint every call goes through. Three
//! tiers, dependencies pointing down only (reticle/tests/layering.rs checks): the chokepoint and
//! [`registry`]; families, one folder each, one file per tool, importing leaves only; and leaves,
//! which import no family. The flow domain shared with `reticle verify` is the room below,
//! [`crate::flow`].
//! This room runs tools; it must not know transports.

pub mod bounds;
pub mod call;
/// The chokepoint: size cap, schema check, session resolution, root span, settle guard, lease
/// check, the `session` block, the handler.
pub mod chokepoint;
/// Leaf: commands through the bridge, and the verdict's live page.
pub mod commands;
pub mod context;
pub mod lease_book;
/// Leaf: a call's `notifications/progress`, for a client that asked.
pub mod progress;
pub mod refusal;
/// Every tool, one line each, and the catalogues built over them.
pub mod registry;
/// Leaf: names, argument types, what a tool declares, the catalogue.
pub mod surface;

/// Leaf: the resolve-act-judge core.
mod acting;
mod arrival;
mod capsules;
pub mod driven;
mod judging;
mod locate;
/// Leaf: whether an element's name is the one asked (whole, or a substring).
mod name_match;
/// Leaf: the published SDK's own controls, kept out of answers.
mod published_ui;
mod real_input;
mod recording;
mod session_block;
mod stand_ins;

/// Families, one folder each, one file per tool, named for what agents call them; a family
/// imports leaves only.
mod driving;
mod flows;
mod leases;
mod meta;
mod page;
mod sessions;
mod testing;

pub use bounds::clip_name;
pub use chokepoint::{MAX_ARGUMENT_BYTES, run_tool};
pub use context::{ToolContext, ToolHost};
pub use refusal::{Refusal, ToolRefusal};
pub use surface::catalogue::{Catalogue, Surface};
pub use surface::names::ToolName;
