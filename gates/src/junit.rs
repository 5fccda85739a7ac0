//! Reading a nextest JUnit report (`cargo nextest run --profile flake-hunt` writes one; see
//! `.config/nextest.toml`): for each test binary (`<testsuite name="gates::hop2_link_faults">`) how many
//! of its tests ran and how many failed. Skipped tests are not in the report, so a suite that is
//! absent did not run. [`suites`] is pure over the XML text; [`read_reports`] reads one report,
//! or every report under a directory (a battery split across CI runners writes one per part) and
//! adds them up. It judges nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What one test binary did in the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SuiteRun {
    pub tests: usize,
    /// Failures and errors.
    pub failed: usize,
}

/// Every `<testsuite>` of the report by name.
pub fn suites(xml: &str) -> BTreeMap<String, SuiteRun> {
    xml.split("<testsuite ")
        .skip(1)
        .filter_map(|tail| {
            let tag = tail.split('>').next()?;
            let count = |name: &str| attribute(tag, name).and_then(|v| v.parse().ok());
            let run = SuiteRun {
                tests: count("tests")?,
                failed: count("failures").unwrap_or(0) + count("errors").unwrap_or(0),
            };
            Some((attribute(tag, "name")?.to_string(), run))
        })
        .collect()
}

/// The suites of the report at `path`, or of every report under the directory `path`
/// ([`report_files`]), added up suite by suite.
pub fn read_reports(path: &Path) -> std::io::Result<BTreeMap<String, SuiteRun>> {
    let mut total: BTreeMap<String, SuiteRun> = BTreeMap::new();
    for report in report_files(path)? {
        for (name, run) in suites(&std::fs::read_to_string(&report)?) {
            let sum = total.entry(name).or_default();
            sum.tests += run.tests;
            sum.failed += run.failed;
        }
    }
    Ok(total)
}

/// The report `path`, or every `*.xml` report under the directory `path` (its subdirectories
/// too), sorted. A directory with no report is an error.
pub fn report_files(path: &Path) -> std::io::Result<Vec<PathBuf>> {
    if !path.is_dir() {
        std::fs::metadata(path)?;
        return Ok(vec![path.to_path_buf()]);
    }
    let mut reports = Vec::new();
    let mut dirs = vec![path.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?.path();
            if entry.is_dir() {
                dirs.push(entry);
            } else if entry.extension().is_some_and(|ext| ext == "xml") {
                reports.push(entry);
            }
        }
    }
    if reports.is_empty() {
        return Err(std::io::Error::other(format!(
            "{} holds no JUnit report (*.xml)",
            path.display()
        )));
    }
    reports.sort();
    Ok(reports)
}

/// The value of `name="..."` in a tag's attributes.
fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!("{name}=\"");
    let start = if tag.starts_with(&key) {
        key.len()
    } else {
        tag.find(&format!(" {key}"))? + key.len() + 1
    };
    tag.get(start..)?.split('"').next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suites_are_read_with_their_counts() {
        let xml = r#"<testsuites name="nextest-run" tests="3" failures="1">
    <testsuite name="gates" tests="2" skipped="0" errors="0" failures="1">
        <testcase name="a" classname="gates"/>
    </testsuite>
    <testsuite name="gates::hop3_hung_cli" tests="1" skipped="0" errors="0" failures="0">
    </testsuite>
</testsuites>"#;
        let read = suites(xml);
        assert_eq!(
            read["gates"],
            SuiteRun {
                tests: 2,
                failed: 1
            }
        );
        assert_eq!(
            read["gates::hop3_hung_cli"],
            SuiteRun {
                tests: 1,
                failed: 0
            }
        );
        assert_eq!(read.len(), 2, "testsuites is not a suite: {read:?}");
    }

    #[test]
    fn a_directory_of_part_reports_adds_up_and_an_empty_one_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let part = |k: usize, failures: usize| {
            format!(
                r#"<testsuites><testsuite name="gates::hop2_link_faults" tests="{k}" failures="{failures}" errors="0"></testsuite><testsuite name="toxics::part{k}" tests="1" failures="0" errors="0"></testsuite></testsuites>"#
            )
        };
        for k in 1..=2 {
            let sub = dir.path().join(format!("battery-junit-{k}"));
            std::fs::create_dir_all(&sub).unwrap();
            std::fs::write(sub.join("junit.xml"), part(k, k - 1)).unwrap();
        }
        let read = read_reports(dir.path()).unwrap();
        assert_eq!(
            read["gates::hop2_link_faults"],
            SuiteRun {
                tests: 3,
                failed: 1
            }
        );
        assert!(read.contains_key("toxics::part1") && read.contains_key("toxics::part2"));
        let single = dir.path().join("battery-junit-1/junit.xml");
        assert_eq!(
            read_reports(&single).unwrap()["gates::hop2_link_faults"].tests,
            1
        );
        let empty = tempfile::tempdir().unwrap();
        assert!(read_reports(empty.path()).is_err());
    }
}
