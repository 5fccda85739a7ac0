//! The gate framework: the fragility inventory as data, the scenarios that provoke each row,
//! the history of every operation, the checkers that judge it and the scorecard.
//!
//! Gates treat the product as a black box: they start the real binary and speak its real
//! interfaces through `harness`, sharing wire types but never calling product internals.
//!
//! # Layout
//! - [`inventory`]: every row (H1.1 … H5.5, T1 … T4, L1), its hop, target and scenario.
//! - [`history`]: the append-only record of every operation a gate performs (it lives in the
//!   harness, whose clients record into it; re-exported here).
//! - [`fault`]: the name of every fault a history records, defined once.
//! - [`git`]: one git command's output (the soak's commit; `build.rs` embeds the build's).
//! - [`judge`]: the row outcomes and the checkers that decide them from a history.
//! - [`nemesis`]: the TCP fault proxy in front of a hop, driven over Toxiproxy's REST API
//!   (the embedded `toxics` server, or the one `TOXIPROXY_URL` names).
//! - [`trace`]: the `RETICLE_TRACE` checker for invariants T1 to T4, with its calibration.
//! - [`rows`]: the row table, each row id's scenario, judge and negative controls.
//! - [`scenarios`]: the code that provokes each row and judges its history.
//! - [`controls`]: deliberately silent stand-ins that every checker must score `silent`.
//! - [`chaos`]: the judges of compound fault sequences on the agent's link (run by
//!   `gates/tests/chaos.rs`).
//! - [`soak`]: one held-open agent link, rounds of calls across deliberate idle gaps, and what
//!   each round came to (run by `gates/tests/soak.rs` and the `soak` binary).
//! - [`scorecard`]: outcomes against targets and the baseline, in every output format.
//! - [`junit`]: a nextest JUnit report read as what each test binary ran (L1 from execution).
//! - [`built_from`]: the commit the crate is built from, printed into the battery's JUnit report,
//!   and the check that a report handed to `--junit` is of it.
//! - [`analyze`]: `reticle gate analyze DIR`, a finished run's stored histories judged again.
//! - [`compat`]: the SDK compatibility suite (every tool with our SDK and with the published
//!   2.0.0) and its matrix, `docs/sdk-compat.md` (row H5.6, `gates/tests/sdk_compat.rs`).

pub mod analyze;
pub mod built_from;
pub mod chaos;
pub mod compat;
pub mod controls;
pub mod fault;
pub mod git;
pub use harness::history;
pub mod inventory;
pub mod judge;
pub mod junit;
pub mod nemesis;
pub mod parts;
pub mod rows;
pub mod scenarios;
pub mod scorecard;
pub mod soak;
pub mod trace;
