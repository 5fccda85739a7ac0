//! Row L1 as the gate scores it: every layer of the system map's gate table names a gate file
//! that exists (its judge's controls, a layer without a gate and a named file that is gone, are
//! unit tests in `gates/src/rows/layers/l1_every_layer_has_a_gate.rs`). Scored from execution,
//! its negative control: a JUnit report in which the tools layer's tests did not run is silent.

mod common;

#[tokio::test]
async fn every_layer_has_a_gate() {
    common::row_meets_target("L1").await;
}

#[tokio::test]
async fn a_report_in_which_a_layers_tests_did_not_run_is_silent() {
    let control = gates::controls::stand_in_report_without_a_layer().await;
    assert_eq!(
        control.outcome,
        gates::judge::RowOutcome::Silent,
        "{control:?}"
    );
    assert!(control.evidence.contains("tools layer"), "{control:?}");
}
