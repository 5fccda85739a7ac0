//! A CLI call that hangs scores its row `silent` with the evidence "hung", never a hung gate: a
//! stand-in `reticle` that sleeps past the harness's bound (shortened through the harness knob
//! `RETICLE_HARNESS_CLI_BOUND_MS`, so the test does not wait the real bound) runs H3.1's scenario.

use std::os::unix::fs::PermissionsExt;

use gates::judge::{HUNG, RowOutcome};
use gates::rows;
use gates::scenarios::GateEnv;
use harness::cli::CLI_BOUND_VAR;

#[tokio::test]
async fn a_cli_call_that_never_exits_scores_the_row_silent_as_hung() {
    // This test is its own process under nextest: the knob reaches only its own CLI calls.
    unsafe { std::env::set_var(CLI_BOUND_VAR, "300") };
    let dir = tempfile::tempdir().expect("a scratch dir");
    let stand_in = dir.path().join("reticle");
    std::fs::write(&stand_in, "#!/bin/sh\nexec sleep 30\n").expect("the stand-in is written");
    std::fs::set_permissions(&stand_in, std::fs::Permissions::from_mode(0o755))
        .expect("the stand-in is executable");
    let ran = rows::run("H3.1", &GateEnv { reticle: stand_in }).await;
    assert_eq!(
        ran.judgement.outcome,
        RowOutcome::Silent,
        "{}",
        ran.judgement.evidence
    );
    assert!(
        ran.judgement.evidence.starts_with(HUNG),
        "{}",
        ran.judgement.evidence
    );
}
