//! The fuzz target as tests: S11's three properties (`gates::scenarios::fuzz`: HTTP requests,
//! MCP messages, bridge frames) against a real daemon, with a few hundred cases each by default
//! and `PROPTEST_CASES=<n>` for more (in a release run); and the row itself, as `reticle gate`
//! runs it. No panic, no hang, no unbounded growth, every refusal structured.

mod common;

use common::row_meets_target;
use gates::history::History;
use gates::judge::RowOutcome;
use gates::rows::security::s11_fuzz::{judge_fuzz, run_properties};
use harness::OwnedDaemon;

/// Cases of each property when `PROPTEST_CASES` does not say.
const DEFAULT_CASES: u32 = 200;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fuzzed_inputs_never_break_the_daemon() {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(DEFAULT_CASES);
    let daemon = OwnedDaemon::start().await;
    let history = History::new();
    history.fault("fuzzed_inputs", true, serde_json::json!({ "cases": cases }));
    run_properties(&history, &daemon, cases).await;
    let judgement = judge_fuzz(&history.ops());
    assert_eq!(
        judgement.outcome,
        RowOutcome::Survived,
        "{}",
        judgement.evidence
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s11_fuzzed_inputs_never_break_the_daemon() {
    row_meets_target("S11").await;
}
