//! The tool layer: every tool, and [`run_tool`], the one chokepoint every tool call goes
//! through. Three tiers, dependencies pointing down only (reticle/tests/layering.rs checks):
//!
//! - The chokepoint: [`chokepoint`] (size cap, schema check, session resolution, root span,
//!   settle guard, lease check, the `session` block, the handler) and [`registry`] (every tool,
//!   one line each, and the catalogues built over them).
//! - Families, one folder each, one file per tool, named for what agents call them: `page`,
//!   `sessions`, `leases`, `flows`, `meta`, `testing`. A family imports leaves only.
//! - Leaves, which import no family: [`surface`] (names, argument types, what a tool declares,
//!   the catalogue), [`call`], [`context`], [`refusal`], [`lease_book`], [`commands`] (commands
//!   through the bridge, the verdict's live page), `acting` (the resolve-act-judge core),
//!   `judging`, `arrival`, `recording`, `locate`, `capsules`, `bounds`, `session_block`,
//!   `stand_ins`, `published_ui` (the published SDK's own controls kept out of answers).
//!
//! The flow domain the flow tools share with `reticle verify` is the room below, [`crate::flow`].
//! This room runs tools; it must not know transports.

pub mod bounds;
pub mod call;
pub mod chokepoint;
pub mod commands;
pub mod context;
pub mod lease_book;
pub mod refusal;
pub mod registry;
pub mod surface;

mod acting;
mod arrival;
mod capsules;
mod judging;
mod locate;
mod published_ui;
mod recording;
mod session_block;
mod stand_ins;

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
