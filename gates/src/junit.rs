//! Reading a nextest JUnit report (`cargo nextest run --profile flake-hunt` writes one; see
//! `.config/nextest.toml`): for each test binary (`<testsuite name="gates::mcp_link">`) how many
//! of its tests ran and how many failed. Skipped tests are not in the report, so a suite that is
//! absent did not run. Pure over the XML text; it judges nothing.

use std::collections::BTreeMap;

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
    <testsuite name="gates::hung_cli" tests="1" skipped="0" errors="0" failures="0">
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
            read["gates::hung_cli"],
            SuiteRun {
                tests: 1,
                failed: 0
            }
        );
        assert_eq!(read.len(), 2, "testsuites is not a suite: {read:?}");
    }
}
