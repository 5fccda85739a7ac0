//! The gate framework: the fragility inventory as data, the scenarios that provoke each row,
//! the history of every operation, the checkers that judge it and the scorecard.
//!
//! Gates treat the product as a black box: they start the real binary and speak its real
//! interfaces through `harness`, sharing wire types but never calling product internals.

/// `reticle gate analyze DIR`: a finished run's stored histories judged again.
pub mod analyze;
/// The commit the crate is built from, printed into the battery's JUnit report, and
/// the check that a report handed to `--junit` is of it.
pub mod built_from;
/// The judges of compound fault sequences on the agent's link (run by
/// `gates/tests/hop2_chaos.rs`).
pub mod chaos;
/// The SDK compatibility suite (every tool with our SDK and with the published 2.0.0)
/// and its matrix, `docs/sdk-compat.md` (row H5.6, `gates/tests/hop5_sdk_compat.rs`).
pub mod compat;
/// Deliberately silent stand-ins that every checker must score `silent`.
pub mod controls;
/// The name of every fault a history records, defined once.
pub mod fault;
/// One git command's output (the soak's commit; `build.rs` embeds the build's).
pub mod git;
/// The append-only record of every operation a gate performs (it lives in the harness, whose
/// clients record into it).
pub use harness::history;
/// Every row (H1.1 … H5.5, T1 … T4, L1), its hop, target and scenario.
pub mod inventory;
/// The row outcomes and the checkers that decide them from a history.
pub mod judge;
/// A nextest JUnit report read as what each test binary ran (L1 from execution).
pub mod junit;
/// The TCP fault proxy in front of a hop, driven over Toxiproxy's REST API (the
/// embedded `toxics` server, or the one `TOXIPROXY_URL` names).
pub mod nemesis;
pub mod parts;
/// The row table: each row id's scenario, judge and negative controls.
pub mod rows;
/// The code that provokes each row and judges its history.
pub mod scenarios;
/// Outcomes against targets and the baseline, in every output format.
pub mod scorecard;
/// One held-open agent link, rounds of calls across deliberate idle gaps, and what each
/// round came to (run by `gates/tests/hop2_soak.rs` and the `soak` binary).
pub mod soak;
/// The `RETICLE_TRACE` checker for invariants T1 to T4, with its calibration.
pub mod trace;
