//! The flow rows as the gate scores them, each through the real stack (an owned daemon with a
//! private project dir, the fixture app in Chromium): D1 (a SIGKILL during any `.reticle/`
//! write never leaves a torn file), F1 (heal never applies without proof), F2 (an
//! assertion-free flow is never `yes`), F3 (a replay never uses a stale ref). Each row meets
//! its target and baseline, and its negative control (the daemon with the row's stand-in
//! switch, run through the same scenario and judge) scores `silent`.

mod common;

use common::row_meets_target;
use gates::judge::RowOutcome;

async fn its_controls_go_red(row: &'static str) {
    for control in gates::controls::of_row(row).await {
        assert_eq!(control.outcome, RowOutcome::Silent, "{control:?}");
    }
}

#[tokio::test]
async fn d1_sigkill_during_writes_never_tears_a_file_and_in_place_writes_are_caught() {
    row_meets_target("D1").await;
    its_controls_go_red("D1").await;
}

#[tokio::test]
async fn f1_heal_never_applies_without_proof_and_a_guessing_heal_is_caught() {
    row_meets_target("F1").await;
    its_controls_go_red("F1").await;
}

#[tokio::test]
async fn f2_an_assertion_free_flow_is_never_yes_and_a_grade_that_lies_is_caught() {
    row_meets_target("F2").await;
    its_controls_go_red("F2").await;
}

#[tokio::test]
async fn f3_a_replay_resolves_afresh_and_a_stored_ref_is_caught() {
    row_meets_target("F3").await;
    its_controls_go_red("F3").await;
}
