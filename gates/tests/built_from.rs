//! The battery says which commit it is of: this test prints the commit its binary was built from
//! into the JUnit report (nextest's `ci` profile stores its output, `.config/nextest.toml`), and
//! `reticle gate --junit` refuses a report of another commit, or one that names none, before it
//! runs anything (exit 2, naming the cause and the fix); a report of its own commit is taken.

use std::path::Path;
use std::time::Duration;

use assert_cmd::Command;
use gates::built_from::{BUILT_FROM, MARK, line};

const BOUND: Duration = Duration::from_secs(180);

#[test]
fn prints_the_commit_it_was_built_from() {
    assert!(
        BUILT_FROM.len() == 40 && BUILT_FROM.chars().all(|c| c.is_ascii_hexdigit()),
        "the battery was built outside a git checkout, so its report cannot name its commit: {BUILT_FROM}"
    );
    println!("{}", line());
}

/// `reticle gate --only L1 --junit <a report naming commit> --out <out>`.
fn gate_with_report(dir: &Path, commit: Option<&str>) -> assert_cmd::assert::Assert {
    let report = dir.join("junit.xml");
    let out = commit
        .map(|c| format!("<system-out>{MARK}{c}\n</system-out>"))
        .unwrap_or_default();
    std::fs::write(
        &report,
        format!(
            r#"<testsuites><testsuite name="gates::built_from" tests="1" failures="0" errors="0"><testcase name="prints_the_commit_it_was_built_from">{out}</testcase></testsuite></testsuites>"#
        ),
    )
    .unwrap();
    Command::cargo_bin("reticle-gate")
        .expect("reticle-gate is built")
        .arg("--baseline")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("baseline.json"))
        .args(["--only", "L1", "--junit"])
        .arg(&report)
        .arg("--out")
        .arg(dir.join("out"))
        .timeout(BOUND)
        .assert()
}

#[test]
fn a_report_of_another_commit_or_of_none_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let other: String = BUILT_FROM
        .chars()
        .map(|c| if c == '0' { '1' } else { '0' })
        .collect();
    let refused = gate_with_report(dir.path(), Some(&other)).code(2);
    let said = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    assert!(
        said.contains(&other) && said.contains(BUILT_FROM) && said.contains("--profile ci"),
        "{said}"
    );
    assert!(!dir.path().join("out/scorecard.json").exists());
    let refused = gate_with_report(dir.path(), None).code(2);
    let said = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    assert!(said.contains("names no commit"), "{said}");
}

#[test]
fn a_report_of_this_commit_is_taken() {
    let dir = tempfile::tempdir().unwrap();
    let ran = gate_with_report(dir.path(), Some(BUILT_FROM));
    let said = String::from_utf8_lossy(&ran.get_output().stderr).into_owned();
    assert_ne!(ran.get_output().status.code(), Some(2), "{said}");
    assert!(dir.path().join("out/scorecard.json").exists(), "{said}");
}
