//! The gate's hop 4 and hop 5 rows as a whole: the stand-in page control is scored silent by
//! H4.3's checker, and so is a daemon whose trace breaks while H4.3's tab closes mid-command
//! (the trace check on the bridge). Each bridge or SDK row runs as its own test (`common::row_meets_target("<id>")`
//! in some file under `gates/tests/`), which `hop3_gate_rows.rs` checks.

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

/// The trace check on the bridge (every hop 4 and 5 daemon is traced and served a tool call
/// after its fault): a daemon whose trace is broken makes H4.3 silent, naming the invariant,
/// though the page and its command behaved as the row asks.
#[tokio::test]
async fn a_daemon_whose_trace_breaks_while_a_tab_closes_mid_command_is_silent() {
    let control =
        gates::controls::stand_in_broken_trace_on_the_bridge(&harness::binaries::reticle()).await;
    assert_eq!(control.outcome, RowOutcome::Silent, "{control:?}");
    assert!(control.evidence.contains("trace broke"), "{control:?}");
}
