//! `reticle gate --partition K/N` and `reticle gate merge`: three parts of a selection, merged,
//! score every row exactly once with the outcomes of the whole run; a merge missing a part fails
//! naming the rows no part scored. Runs the real `reticle-gate` binary on cheap daemon rows.

use std::path::Path;
use std::time::Duration;

use assert_cmd::Command;
use serde_json::Value;

const ROWS: &str = "H2.4,H3.1,H3.2,H3.4,H3.6";
const BOUND: Duration = Duration::from_secs(180);

fn gate(args: &[&str]) -> assert_cmd::assert::Assert {
    let baseline = Path::new(env!("CARGO_MANIFEST_DIR")).join("baseline.json");
    Command::cargo_bin("reticle-gate")
        .expect("reticle-gate is built")
        .arg("--baseline")
        .arg(&baseline)
        .args(args)
        .timeout(BOUND)
        .assert()
}

fn merge(args: &[&str]) -> assert_cmd::assert::Assert {
    Command::cargo_bin("reticle-gate")
        .expect("reticle-gate is built")
        .arg("merge")
        .args(args)
        .timeout(BOUND)
        .assert()
}

/// Row id → outcome, from a scorecard.json.
fn outcomes(dir: &Path) -> Vec<(String, String)> {
    let card: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("scorecard.json")).unwrap())
            .unwrap();
    card["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_string(),
                r["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn three_parts_merged_score_every_row_once_as_the_whole_run_does() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    gate(&["--only", ROWS, "--out", &at("whole")]).success();
    let mut parted = 0;
    for k in 1..=3 {
        gate(&[
            "--only",
            ROWS,
            "--partition",
            &format!("{k}/3"),
            "--out",
            &at(&format!("p{k}")),
        ])
        .success();
        parted += outcomes(&dir.path().join(format!("p{k}"))).len();
    }
    assert_eq!(parted, 5, "every row in exactly one part");
    merge(&[&at("p1"), &at("p2"), &at("p3"), "--out", &at("merged")]).success();
    assert_eq!(
        outcomes(&dir.path().join("merged")),
        outcomes(&dir.path().join("whole"))
    );

    // The control: a merge that lacks a part fails and names what no part scored.
    let without_third = merge(&[&at("p1"), &at("p2"), "--out", &at("short")]).code(1);
    let said = String::from_utf8_lossy(&without_third.get_output().stderr).into_owned();
    assert!(said.contains("no part scored"), "{said}");
    // And a part given twice is refused.
    merge(&[&at("p1"), &at("p1"), &at("p2"), &at("p3")]).code(1);
}

#[test]
fn a_missing_baseline_is_an_error_not_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-baseline.json");
    let out = Command::cargo_bin("reticle-gate")
        .unwrap()
        .args(["--only", "H3.4", "--baseline"])
        .arg(&missing)
        .timeout(BOUND)
        .assert()
        .code(2);
    let said = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(said.contains("cannot read the baseline"), "{said}");
}
