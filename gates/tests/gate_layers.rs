//! Row L1 as the gate scores it: every layer of the system map's gate table names a gate file
//! that exists (its judge's controls, a layer without a gate and a named file that is gone, are
//! unit tests in `gates/src/scenarios/layers.rs`).

mod common;

#[tokio::test]
async fn every_layer_has_a_gate() {
    common::row_meets_target("L1").await;
}
