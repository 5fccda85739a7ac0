//! The release figures, P1 to P4, as tests: each row meets its target against the committed
//! `bench/release-figures.json` and equals its baseline; and the negative control: one real
//! measurement judged against release figures a third of ours (what a binary three times slower,
//! or three times larger, would measure against the figures here) goes red on every row, the
//! latency rows judging their ratio to the reference round trip timed beside them.

use gates::history::History;
use gates::judge::RowOutcome;
use gates::rows::perf::{self, judge_figure, measure, record};
use gates::scenarios::GateEnv;
use serde_json::json;

mod common;

#[tokio::test]
async fn p1_the_call_round_trip_holds_the_release_figure() {
    common::row_meets_target("P1").await;
}

#[tokio::test]
async fn p2_the_tools_list_round_trip_holds_the_release_figure() {
    common::row_meets_target("P2").await;
}

#[tokio::test]
async fn p3_the_proxys_memory_holds_the_release_figure() {
    common::row_meets_target("P3").await;
}

#[tokio::test]
async fn p4_the_daemons_memory_holds_the_release_figure() {
    common::row_meets_target("P4").await;
}

#[tokio::test]
async fn a_build_three_times_past_the_release_figures_goes_red_on_every_p_row() {
    let env = GateEnv {
        reticle: harness::binaries::reticle(),
    };
    let measured = measure(&env).await.expect("a measurement");
    for id in ["P1", "P2", "P3", "P4"] {
        let (value, _) = measured.figure(id).unwrap();
        let factor = if id == "P1" || id == "P2" { 2.0 } else { 1.5 };
        let history = History::new();
        record(
            &history,
            id,
            Ok(measured),
            &json!({ "value": value / 3.0, "factor": factor }),
        );
        let judgement = judge_figure(&history.ops());
        assert_eq!(judgement.outcome, RowOutcome::Silent, "{id}: {judgement:?}");
        assert!(judgement.evidence.contains("3.00×"), "{id}: {judgement:?}");
        if id == "P1" || id == "P2" {
            assert!(
                judgement.evidence.contains("reference round trip"),
                "{id}: the absolute medians beside the ratio: {judgement:?}"
            );
        }
    }
    assert!(perf::figures_path().is_file());
}
