//! Which commit a battery's JUnit report is of. The crate embeds the commit it is built from
//! ([`BUILT_FROM`], from `gates/build.rs`), a battery test prints it ([`line`]) and nextest's
//! `ci` profile keeps that output in the report (`.config/nextest.toml`).
//!
//! `reticle gate --junit` refuses a report not of its own commit ([`check_reports`]). It reads
//! reports; it must not judge a row.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::junit;

/// The full hash of the commit this crate was built from, or `unknown` outside a git checkout.
pub const BUILT_FROM: &str = env!("GATES_BUILT_FROM");

/// What precedes the commit in the line the battery prints.
pub const MARK: &str = "reticle-battery-built-from: ";

/// The line the battery prints into its report.
pub fn line() -> String {
    format!("{MARK}{BUILT_FROM}")
}

/// Every commit a report's text names.
pub fn commits_named(xml: &str) -> BTreeSet<String> {
    xml.split(MARK)
        .skip(1)
        .map(|tail| {
            tail.chars()
                .take_while(char::is_ascii_alphanumeric)
                .collect::<String>()
        })
        .filter(|commit| !commit.is_empty())
        .collect()
}

/// Whether the report `path` (a file, or a directory of them, as `--junit` takes it) is of the
/// commit `own`: no report may name another commit, and every part must name `own` (the file
/// itself; in a directory, each subdirectory holding reports, one per battery part, and each
/// report directly inside it). `Err` is the sentence that says why not
/// and how to hand over the right one.
pub fn check_reports(path: &Path, own: &str) -> Result<(), String> {
    if own == "unknown" {
        return Err(
            "this reticle gate was built outside a git checkout, so it cannot tell a JUnit report of its own commit; build it from the checkout"
                .to_string(),
        );
    }
    let reports = junit::report_files(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut named: Vec<(PathBuf, BTreeSet<String>)> = Vec::new();
    for report in reports {
        let text =
            std::fs::read_to_string(&report).map_err(|e| format!("{}: {e}", report.display()))?;
        named.push((report, commits_named(&text)));
    }
    let how = "hand over the report its battery wrote at this commit (`cargo nextest run --profile ci` here, target/nextest/ci/junit.xml; in CI this run's battery-junit-* artifacts)";
    if let Some((report, other)) = named
        .iter()
        .find_map(|(r, commits)| commits.iter().find(|c| *c != own).map(|c| (r, c)))
    {
        return Err(format!(
            "the JUnit report {} is of commit {other}, and this reticle gate of {own}: {how}",
            report.display()
        ));
    }
    for part in parts(path, &named) {
        let names_own = named
            .iter()
            .any(|(report, commits)| report.starts_with(&part) && commits.contains(own));
        if !names_own {
            return Err(format!(
                "the JUnit report {} names no commit (its battery did not run `gates::built_from` under the `ci` profile, which stores that test's output), so it cannot be shown to be of {own}: {how}",
                part.display()
            ));
        }
    }
    Ok(())
}

/// The parts of a hand-over that must each name the commit: the file itself, or the directory's
/// subdirectories that hold reports and each report directly inside it.
fn parts(path: &Path, named: &[(PathBuf, BTreeSet<String>)]) -> BTreeSet<PathBuf> {
    named
        .iter()
        .map(|(report, _)| {
            let inside = report.strip_prefix(path).ok();
            match inside.and_then(|rest| rest.components().next()) {
                Some(first) if inside.is_some_and(|rest| rest.components().count() > 1) => {
                    path.join(first)
                }
                _ => report.clone(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const OWN: &str = "0123456789abcdef0123456789abcdef01234567";
    const OTHER: &str = "fedcba9876543210fedcba9876543210fedcba98";

    fn report(commit: Option<&str>) -> String {
        let out = commit
            .map(|c| format!("<system-out>{MARK}{c}\n</system-out>"))
            .unwrap_or_default();
        format!(
            r#"<testsuites><testsuite name="gates::built_from" tests="1" failures="0" errors="0"><testcase name="prints_the_commit_it_was_built_from">{out}</testcase></testsuite></testsuites>"#
        )
    }

    #[test]
    fn the_printed_line_is_read_back_as_its_commit() {
        assert_eq!(
            commits_named(&format!("<system-out>{}\n</system-out>", line())),
            BTreeSet::from([BUILT_FROM.to_string()])
        );
        assert!(commits_named(&report(None)).is_empty());
    }

    #[test]
    fn a_report_of_this_commit_passes_and_another_or_none_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("junit.xml");
        std::fs::write(&file, report(Some(OWN))).unwrap();
        assert_eq!(check_reports(&file, OWN), Ok(()));
        std::fs::write(&file, report(Some(OTHER))).unwrap();
        let other = check_reports(&file, OWN).unwrap_err();
        assert!(other.contains(OTHER) && other.contains(OWN), "{other}");
        assert!(other.contains("--profile ci"), "{other}");
        std::fs::write(&file, report(None)).unwrap();
        let none = check_reports(&file, OWN).unwrap_err();
        assert!(none.contains("names no commit"), "{none}");
        assert!(check_reports(&file, "unknown").is_err());
    }

    #[test]
    fn every_battery_part_must_name_the_commit() {
        let dir = tempfile::tempdir().unwrap();
        let part = |k: usize, name: &str, commit: Option<&str>| {
            let sub = dir.path().join(format!("battery-junit-{k}/{name}"));
            std::fs::create_dir_all(&sub).unwrap();
            std::fs::write(sub.join("junit.xml"), report(commit)).unwrap();
        };
        for k in 1..=2 {
            part(k, "ci", None);
            part(k, "ci-commit", Some(OWN));
        }
        assert_eq!(check_reports(dir.path(), OWN), Ok(()));
        // A third part that names no commit: it could be of any.
        part(3, "ci", None);
        let missing = check_reports(dir.path(), OWN).unwrap_err();
        assert!(missing.contains("battery-junit-3"), "{missing}");
        // ... or names another.
        part(3, "ci-commit", Some(OTHER));
        let stale = check_reports(dir.path(), OWN).unwrap_err();
        assert!(stale.contains(OTHER), "{stale}");
    }
}
