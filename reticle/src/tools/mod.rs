//! The tool layer: the catalogue and the one chokepoint every tool call goes through,
//! [`run_tool`].
//!
//! # Layout
//! - [`names`]: every tool name, once, with its standing (default, extended, family member).
//! - [`args`]: each tool's argument type; input schemas are generated from these.
//! - `lean_schema`: says each thing once in a generated schema (single-use `$defs` in place,
//!   no repeated descriptions).
//! - [`catalogue`]: which tools this daemon has and advertises (the surface), their
//!   definitions, version and hash.
//! - [`chokepoint`]: [`run_tool`]: size cap, schema check, session resolution, root span,
//!   settle guard, concurrency accounting, the `session` block, and the only dispatch.
//! - [`refusal`]: the one refusal shape, `{ok:false, reason, recovery}`.
//! - [`context`]: what a call can reach: the bridge, who is calling, accounting, the lease
//!   book, per-session memory, where it may write.
//! - [`lease_book`]: which holder (an agent's link, or a job inside the daemon) has leased which
//!   session, in memory; the API `reticle verify --jobs` leases its sessions through.
//! - [`page`]: commands through the bridge, and `LivePage`, the verdict's observation of a page.
//! - Handlers, one module per family: `sessions` (with `next_action`, what to do when no page
//!   is connected), `look` (snapshot, query, inspect, navigate,
//!   state, capabilities, clock), `act` (act, act_sequence, act_and_wait), `observe` (observe,
//!   network, console), `verify` (assert, wait_for), `session_family`, `meta` (tools, run,
//!   feedback), `flows` (flow_save, flow), `replay` (flow_replay), `suite` (verify),
//!   `runs` (run artifacts and run_export), `baselines` (baseline), `leases` (lease, and the
//!   refusal of a call on a session another holder leased), `record` (record,
//!   flow_save_recorded), `heal` (flow_heal, with
//!   `rebind` ranking a gone target's candidates), `capsule_replay` (replay of a capsule),
//!   `testing` (test-only tools);
//!   `capsules` for red
//!   verdicts, `redact` for what a capsule or a flow must not keep, `flow_model` for what a flow
//!   is and how much it proves, `recording` for a recording in progress (the act tools append
//!   to it), `locate` for the user-facing locator of an element acted on by ref, `published_ui` for
//!   the published 2.0.0 SDK's own controls kept out of snapshots and queries. `act` holds the resolve-act-judge core that act_and_wait and
//!   every replayed step share.
//!
//! `flow_model`, `flows` (loading a saved flow), `runs` (the run artifact and its exports) and
//! `suite` (the suite verdict) are also read by the `reticle verify` command, which drives
//! replays through the daemon and records the suite the same way the tool does.
//!
//! This room runs tools; it must not know transports.

pub mod args;
pub mod bounds;
pub mod call;
pub mod catalogue;
pub mod chokepoint;
pub mod context;
pub mod lease_book;
pub mod names;
pub mod page;
pub mod refusal;

mod act;
mod baselines;
mod capsule_replay;
mod capsules;
pub mod flows;
mod heal;
mod judging;
mod lean_schema;
mod leases;
mod locate;
mod look;
mod meta;
mod next_action;
mod observe;
mod published_ui;
mod rebind;
mod record;
mod recording;
mod replay;
mod run_export;
mod session_block;
mod session_family;
mod sessions;
mod stand_ins;
mod suite;
mod testing;
mod verify;

pub use bounds::clip_name;
pub use catalogue::{Catalogue, Surface};
pub use chokepoint::{MAX_ARGUMENT_BYTES, run_tool};
pub use context::{ToolContext, ToolHost};
pub use names::ToolName;
pub use refusal::{Refusal, ToolRefusal};
