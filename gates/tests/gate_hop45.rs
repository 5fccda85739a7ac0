//! The gate's hop 4 and hop 5 rows as a whole: the stand-in page control is scored silent by
//! H4.3's checker, and every implemented bridge or SDK row has its own test that runs the row's
//! gate scenario and asserts its target (`common::row_meets_target("<id>")` in some file under
//! `gates/tests/`), since `gate_hop3.rs` leaves those rows to them.

use gates::inventory::{Hop, find};
use gates::judge::RowOutcome;
use gates::scenarios::IMPLEMENTED;

#[tokio::test]
async fn the_stand_in_page_that_blames_the_app_is_scored_silent() {
    let control = gates::controls::stand_in_page_blames_the_app().await;
    assert_eq!(control.outcome, RowOutcome::Silent, "{control:?}");
    assert!(
        control.evidence.contains("blamed on the app"),
        "{}",
        control.evidence
    );
}

#[test]
fn every_bridge_and_sdk_row_with_a_scenario_has_its_own_test() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests");
    let sources: String = std::fs::read_dir(dir)
        .expect("gates/tests exists")
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "rs"))
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .collect();
    for id in IMPLEMENTED {
        let row = find(id).expect("a scenario's row is in the inventory");
        if matches!(row.hop, Hop::Bridge | Hop::Sdk) {
            let call = format!("row_meets_target(\"{id}\")");
            assert!(
                sources.contains(&call),
                "{id} has a gate scenario but no test under gates/tests/ calls {call}"
            );
        }
    }
}
