//! Run artifacts: every flow replay and every verify (the tool, and `reticle verify`) writes
//! `runs/<id>.json` through the workspace (format-stamped, atomic, the newest 500 kept). It
//! renders one as JUnit XML ([`junit`]) and as Markdown for a pull-request comment
//! ([`markdown`]).
//!
//! It writes and renders runs; it must not replay anything.

use std::time::Instant;

use serde_json::{Map, Value, json};
use time::format_description::well_known::Rfc3339;

use crate::store::workspace::{DIR_NAME, Folder, Workspace, stamped_name};
use crate::verdict::Verified;

/// What wrote a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunKind {
    FlowReplay,
    Verify,
}

impl RunKind {
    const fn as_str(self) -> &'static str {
        match self {
            RunKind::FlowReplay => "flow_replay",
            RunKind::Verify => "verify",
        }
    }
}

/// A run under way: its id, kind and clock.
pub struct Run {
    id: String,
    kind: RunKind,
    started_at: String,
    clock: Instant,
}

/// A run's outcome as stored.
pub struct RunVerdict<'a> {
    pub verified: Verified,
    pub because: &'a str,
    /// Each flow's record, in the order they ran.
    pub flows: &'a [Value],
}

impl Run {
    pub fn begin(kind: RunKind) -> Self {
        Self {
            id: stamped_name(),
            kind,
            started_at: time::OffsetDateTime::now_utc()
                .format(&Rfc3339)
                .unwrap_or_default(),
            clock: Instant::now(),
        }
    }

    /// The run's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Writes the artifact; the path to show on success, a sentence on failure.
    pub fn save(&self, workspace: &Workspace, outcome: &RunVerdict<'_>) -> Result<String, String> {
        workspace
            .save(Folder::Runs, &self.id, &self.document(outcome))
            .map_err(|e| format!("the run artifact could not be written: {e}"))?;
        Ok(format!(
            "{DIR_NAME}/{}/{}.json",
            Folder::Runs.dir_name(),
            self.id
        ))
    }

    /// The artifact's document (the workspace adds the format when it saves it).
    pub fn document(&self, outcome: &RunVerdict<'_>) -> Map<String, Value> {
        let mut document = Map::new();
        document.insert("id".into(), json!(self.id));
        document.insert("kind".into(), json!(self.kind.as_str()));
        document.insert("startedAt".into(), json!(self.started_at));
        document.insert(
            "durationMs".into(),
            json!(self.clock.elapsed().as_millis() as u64),
        );
        document.insert("verified".into(), json!(outcome.verified));
        document.insert("because".into(), json!(outcome.because));
        document.insert("flows".into(), json!(outcome.flows));
        document
    }

    /// Adds `runId` and `runSaved` (or `runError`) to an answer after saving.
    pub fn save_into(&self, workspace: &Workspace, outcome: &RunVerdict<'_>, answer: &mut Value) {
        answer["runId"] = json!(self.id);
        match self.save(workspace, outcome) {
            Ok(path) => answer["runSaved"] = json!(path),
            Err(why) => answer["runError"] = json!(why),
        }
    }
}

/// The stamp a run id sorts by: `(epoch ms, counter)`.
fn age(id: &str) -> (u128, u64) {
    let mut parts = id.split('-');
    let millis = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let counter = parts.nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
    (millis, counter)
}

/// The newest run saved in `workspace`, by its stamp.
pub fn newest(workspace: &Workspace) -> Option<String> {
    workspace
        .list(Folder::Runs)
        .into_iter()
        .map(|listed| listed.name)
        .max_by_key(|name| age(name))
}

/// A run as JUnit XML: one testsuite, one testcase per flow.
pub fn junit(run: &Value) -> String {
    let flows = run["flows"].as_array().cloned().unwrap_or_default();
    let seconds = |ms: &Value| format!("{:.3}", ms.as_u64().unwrap_or(0) as f64 / 1000.0);
    let count = |verdict: &str| flows.iter().filter(|f| f["verified"] == verdict).count();
    let id = run["id"].as_str().unwrap_or("");
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    xml.push_str(&format!(
        "<testsuites name=\"reticle\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{}\">\n",
        flows.len(),
        count("no"),
        count("unknown"),
        seconds(&run["durationMs"])
    ));
    xml.push_str(&format!(
        "  <testsuite name=\"{}\" id=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{}\" timestamp=\"{}\">\n",
        escape(&format!("reticle {}", run["kind"].as_str().unwrap_or("run"))),
        escape(id),
        flows.len(),
        count("no"),
        count("unknown"),
        seconds(&run["durationMs"]),
        escape(run["startedAt"].as_str().unwrap_or(""))
    ));
    for flow in &flows {
        let name = flow["name"].as_str().unwrap_or("(unnamed)");
        xml.push_str(&format!(
            "    <testcase classname=\"reticle.flows\" name=\"{}\" time=\"{}\"",
            escape(name),
            seconds(&flow["durationMs"])
        ));
        let element = match flow["verified"].as_str() {
            Some("yes") => None,
            Some("no") => Some("failure"),
            _ => Some("error"),
        };
        match element {
            None => xml.push_str("/>\n"),
            Some(element) => {
                let message = failure_text(flow);
                xml.push_str(&format!(
                    ">\n      <{element} message=\"{}\" type=\"{}\">{}</{element}>\n    </testcase>\n",
                    escape(&message),
                    escape(flow["reason"].as_str().unwrap_or("")),
                    escape(&flow["failure"].to_string())
                ));
            }
        }
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}

/// Why a flow is not `yes`, naming its failing step once: a flow's reason names the step itself
/// (`step 3 of 4 (click ...) was no: ...`), so it is prefixed with `step N: ` only when it does
/// not already start with it.
pub fn failure_text(flow: &Value) -> String {
    let because = flow["because"].as_str().unwrap_or("");
    match flow["failingStep"].as_u64() {
        Some(step) if !names_step(because, step) => format!("step {step}: {because}"),
        _ => because.to_string(),
    }
}

/// Whether `because` starts by naming step `step` (`step 3 of 4 ...`, `step 3: ...`).
fn names_step(because: &str, step: u64) -> bool {
    because
        .strip_prefix(&format!("step {step}"))
        .is_some_and(|rest| rest.starts_with([' ', ':', ',']))
}

/// A run as Markdown for a pull-request comment: the verdict, then a table with one row per
/// flow (verdict, failing step, time) and, under it, why each flow that is not `yes` is not.
pub fn markdown(run: &Value) -> String {
    let flows = run["flows"].as_array().cloned().unwrap_or_default();
    let cell = |text: &str| text.replace('|', "\\|").replace('\n', " ");
    let seconds = |ms: &Value| format!("{:.1} s", ms.as_u64().unwrap_or(0) as f64 / 1000.0);
    let mut md = format!(
        "### Reticle verify: {}\n\n{}\n\n| flow | verdict | failing step | time |\n| --- | --- | --- | --- |\n",
        run["verified"].as_str().unwrap_or("unknown"),
        cell(run["because"].as_str().unwrap_or(""))
    );
    for flow in &flows {
        let step = flow["failingStep"]
            .as_u64()
            .map_or_else(|| "-".to_string(), |s| s.to_string());
        md.push_str(&format!(
            "| {} | {} | {step} | {} |\n",
            cell(flow["name"].as_str().unwrap_or("(unnamed)")),
            flow["verified"].as_str().unwrap_or("unknown"),
            seconds(&flow["durationMs"])
        ));
    }
    let unproven: Vec<&Value> = flows.iter().filter(|f| f["verified"] != "yes").collect();
    if !unproven.is_empty() {
        md.push('\n');
        for flow in unproven {
            md.push_str(&format!(
                "- **{}**: {}\n",
                cell(flow["name"].as_str().unwrap_or("(unnamed)")),
                cell(flow["because"].as_str().unwrap_or(""))
            ));
        }
    }
    md
}

/// Text as XML character data or an attribute value.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 has no place for other control characters.
            c if (c as u32) < 0x20 && !matches!(c, '\n' | '\t' | '\r') => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn junit_has_one_testcase_per_flow_and_names_the_failing_step() {
        let run = json!({
            "id": "1-2-3", "kind": "verify", "startedAt": "t", "durationMs": 1500,
            "flows": [
                {"name": "sign-in", "verified": "yes", "durationMs": 700},
                {"name": "a<b", "verified": "no", "reason": "step_failed", "failingStep": 3,
                 "because": "no element matches \"x\" & more", "durationMs": 800,
                 "failure": {"step": 3}},
                {"name": "free", "verified": "unknown", "because": "assertion-free"}
            ]
        });
        let xml = junit(&run);
        assert_eq!(xml.matches("<testcase ").count(), 3, "{xml}");
        assert!(
            xml.contains("tests=\"3\" failures=\"1\" errors=\"1\""),
            "{xml}"
        );
        assert!(
            xml.contains(
                "<failure message=\"step 3: no element matches &quot;x&quot; &amp; more\""
            ),
            "{xml}"
        );
        assert!(xml.contains("name=\"a&lt;b\""), "{xml}");
        assert!(xml.contains("<error message=\"assertion-free\""), "{xml}");
    }

    /// The player's reason already names the step: the message says it once, not
    /// `step 3: step 3 of 4 ...`. Control: a reason that does not name it gets the prefix.
    #[test]
    fn a_failure_names_its_step_once() {
        let named = json!({"failingStep": 3, "because": "step 3 of 4 (click {\"testid\":\"add\"}) was no: nothing changed"});
        assert_eq!(
            failure_text(&named),
            "step 3 of 4 (click {\"testid\":\"add\"}) was no: nothing changed"
        );
        let xml = junit(
            &json!({"flows": [{"name": "f", "verified": "no", "failingStep": 3,
            "because": named["because"]}]}),
        );
        assert_eq!(xml.matches("step 3").count(), 1, "{xml}");
        let bare = json!({"failingStep": 3, "because": "no element matches"});
        assert_eq!(failure_text(&bare), "step 3: no element matches");
        let other = json!({"failingStep": 3, "because": "step 31 of 40 was no"});
        assert_eq!(failure_text(&other), "step 3: step 31 of 40 was no");
        let none = json!({"because": "assertion-free"});
        assert_eq!(failure_text(&none), "assertion-free");
    }

    #[test]
    fn markdown_has_one_row_per_flow_and_says_why_a_flow_is_not_yes() {
        let run = json!({
            "verified": "no", "because": "2 flow(s): 1 yes, 1 no, 0 unknown",
            "flows": [
                {"name": "sign-in", "verified": "yes", "durationMs": 700},
                {"name": "a|b", "verified": "no", "failingStep": 3,
                 "because": "step 3 of 3 was no", "durationMs": 800}
            ]
        });
        let md = markdown(&run);
        assert!(md.contains("| sign-in | yes | - | 0.7 s |"), "{md}");
        assert!(md.contains("| a\\|b | no | 3 | 0.8 s |"), "{md}");
        assert!(md.contains("- **a\\|b**: step 3 of 3 was no"), "{md}");
    }

    #[test]
    fn the_newest_run_is_chosen_by_stamp_and_counter() {
        let mut ids = ["100-7-9", "100-7-10", "99-7-50"];
        ids.sort_by_key(|id| age(id));
        assert_eq!(ids, ["99-7-50", "100-7-9", "100-7-10"]);
    }
}
