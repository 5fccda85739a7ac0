//! The gate's hop 4 and hop 5 rows as a whole: the stand-in page control is scored silent by
//! H4.3's checker. Each bridge or SDK row runs as its own test (`common::row_meets_target("<id>")`
//! in some file under `gates/tests/`), which `gate_hop3.rs` checks.

use gates::judge::RowOutcome;

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
