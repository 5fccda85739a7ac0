//! The SDK compatibility suite (row H5.6): every tool family and action through the real proxy
//! on the fixture page in Chromium, with our SDK and with the published `@reticlehq/browser`
//! 2.0.0, compared probe by probe. The matrix is `docs/sdk-compat.md`: this test checks it, or
//! rewrites it when `RETICLE_WRITE_SDK_COMPAT=1`. The negative control: a stand-in SDK whose
//! state tool is broken makes the row go red, naming the probe.

use gates::compat::Sdk;
use gates::judge::RowOutcome;
use gates::rows::hop5::h5_6_published_sdk as compat;
use gates::scenarios::GateEnv;

const MATRIX_DOC: &str = "docs/sdk-compat.md";

fn env() -> GateEnv {
    GateEnv {
        reticle: harness::binaries::reticle(),
    }
}

#[tokio::test]
async fn the_published_sdk_agrees_with_ours_on_every_tool() {
    let (ran, matrix) = compat::agrees(&env(), Sdk::Published).await;
    let matrix = matrix.unwrap_or_else(|| panic!("no matrix: {}", ran.judgement.evidence));
    let written = matrix.markdown();
    let path = harness::fixture_app::repo_root().join(MATRIX_DOC);
    if std::env::var_os("RETICLE_WRITE_SDK_COMPAT").is_some() {
        std::fs::write(&path, &written).unwrap();
    } else {
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert_eq!(
            committed, written,
            "{MATRIX_DOC} is not what the suite found; rerun with RETICLE_WRITE_SDK_COMPAT=1"
        );
    }
    assert_eq!(
        ran.judgement.outcome,
        RowOutcome::Survived,
        "{}",
        ran.judgement.evidence
    );
}

#[tokio::test]
async fn a_stand_in_sdk_that_breaks_the_state_tool_turns_the_row_red() {
    let (ran, matrix) = compat::agrees(&env(), Sdk::BrokenState).await;
    assert_eq!(
        ran.judgement.outcome,
        RowOutcome::Silent,
        "{}",
        ran.judgement.evidence
    );
    let failed: Vec<String> = matrix
        .expect("both stacks started")
        .failures()
        .iter()
        .map(|r| r.probe.clone())
        .collect();
    assert!(
        failed.contains(&"state of a path".to_string()),
        "{failed:?}"
    );
}
