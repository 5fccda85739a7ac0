//! The scorecard: every row's outcome against its target and the committed baseline, the negative
//! controls, and the verdict, rendered as a terminal table, JSON, Markdown and JUnit XML. It
//! formats and decides; it runs nothing.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::inventory::{Row, Target};
use crate::judge::{Judgement, RowOutcome};
use crate::parts::Selection;

/// Exit codes of `reticle-gate`.
pub mod exit {
    /// Every row met its target, no silent row, no regression, every control went red.
    pub const PASSED: u8 = 0;
    /// Something did not.
    pub const FAILED: u8 = 1;
    /// The command line was wrong.
    pub const USAGE: u8 = 2;
}

/// One scored row.
#[derive(Debug, Clone, Serialize)]
pub struct Score {
    pub id: &'static str,
    pub hop: &'static str,
    pub target: Target,
    pub outcome: RowOutcome,
    pub evidence: String,
    pub ms: u64,
    pub baseline: Option<RowOutcome>,
}

impl Score {
    pub fn new(row: &Row, judgement: Judgement, ms: u64, baseline: Option<RowOutcome>) -> Self {
        Self {
            id: row.id,
            hop: row.hop.label(),
            target: row.target,
            outcome: judgement.outcome,
            evidence: judgement.evidence,
            ms,
            baseline,
        }
    }

    /// Worse than the committed baseline.
    pub fn regressed(&self) -> bool {
        self.baseline.is_some_and(|b| self.outcome < b)
    }

    /// Why this row fails the gate, if it does.
    pub fn problem(&self) -> Option<String> {
        if self.outcome == RowOutcome::Silent {
            Some(format!("{} is silent", self.id))
        } else if self.regressed() {
            Some(format!(
                "{} regressed from {} to {}",
                self.id,
                self.baseline.map(RowOutcome::word).unwrap_or(""),
                self.outcome.word()
            ))
        } else if !self.outcome.meets(self.target) {
            Some(
                format!(
                    "{} is {} (target {:?})",
                    self.id,
                    self.outcome.word(),
                    self.target
                )
                .to_lowercase(),
            )
        } else {
            None
        }
    }
}

/// A negative control: a stand-in that breaks its row's promise, run through the row's scenario
/// and judge, which must go red on it ([`Control::went_red`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Control {
    pub name: String,
    pub row: String,
    pub outcome: RowOutcome,
    pub evidence: String,
}

impl Control {
    /// A control's result: the judgement its stand-in got.
    pub fn of(name: &str, row: &str, judgement: Judgement) -> Self {
        Self {
            name: name.to_string(),
            row: row.to_string(),
            outcome: judgement.outcome,
            evidence: judgement.evidence,
        }
    }

    /// A control passes only when the checker went red on it: `silent`, or, for a row whose
    /// target is `survived`, `surfaced` (a stand-in whose calls fail with an error the agent sees
    /// broke that promise, and the judge rightly says the error surfaced). Inconclusive proves
    /// nothing and survived means the checker cannot fail: neither is red.
    pub fn went_red(&self) -> bool {
        match self.outcome {
            RowOutcome::Silent => true,
            RowOutcome::Surfaced => {
                crate::inventory::find(&self.row).is_some_and(|r| r.target == Target::Survived)
            }
            RowOutcome::Inconclusive | RowOutcome::Survived => false,
        }
    }
}

/// The whole result of a gate run.
#[derive(Debug, Clone, Serialize)]
pub struct Scorecard {
    pub generated_at: String,
    /// What the run was asked to score (absent only on a card being assembled).
    pub selection: Option<Selection>,
    pub rows: Vec<Score>,
    pub controls: Vec<Control>,
}

/// Reads a baseline file: `{"H3.1": "surfaced", ...}`.
pub fn parse_baseline(text: &str) -> Result<BTreeMap<String, RowOutcome>, String> {
    let raw: BTreeMap<String, String> = serde_json::from_str(text)
        .map_err(|e| format!("the baseline is not a JSON object of outcomes: {e}"))?;
    raw.into_iter()
        .map(|(id, word)| {
            RowOutcome::parse(&word)
                .map(|o| (id.clone(), o))
                .ok_or_else(|| format!("the baseline gives {id} the unknown outcome '{word}'"))
        })
        .collect()
}

impl Scorecard {
    /// Every reason the gate fails; empty when it passes.
    pub fn problems(&self) -> Vec<String> {
        let mut problems: Vec<String> = self.rows.iter().filter_map(Score::problem).collect();
        for control in self.controls.iter().filter(|c| !c.went_red()) {
            problems.push(format!(
                "negative control `{}` was scored {}, not red: the checker for {} cannot fail",
                control.name,
                control.outcome.word(),
                control.row
            ));
        }
        problems
    }

    pub fn passed(&self) -> bool {
        self.problems().is_empty()
    }

    /// The baseline this run would commit: each row's outcome. Refused, naming the rows, when a
    /// row is silent or inconclusive: a baseline records promises that held, never a failure
    /// or a run that proved nothing.
    pub fn as_baseline(&self) -> Result<BTreeMap<&'static str, &'static str>, String> {
        let unfit: Vec<String> = self
            .rows
            .iter()
            .filter(|s| matches!(s.outcome, RowOutcome::Silent | RowOutcome::Inconclusive))
            .map(|s| format!("{} ({})", s.id, s.outcome.word()))
            .collect();
        if !unfit.is_empty() {
            return Err(format!(
                "not recording a baseline with {}: fix those rows (or run them again) first",
                unfit.join(", ")
            ));
        }
        Ok(self.rows.iter().map(|s| (s.id, s.outcome.word())).collect())
    }

    /// Rows the baseline records that this run did not score. Only a run of the whole inventory
    /// can say so (an `--only` or `--partition` run leaves rows out on purpose).
    pub fn unrun_baseline_rows(&self, baseline: &BTreeMap<String, RowOutcome>) -> Vec<String> {
        if !self.selection.as_ref().is_some_and(Selection::is_whole) {
            return Vec::new();
        }
        baseline
            .keys()
            .filter(|id| !self.rows.iter().any(|s| s.id == id.as_str()))
            .map(|id| format!("{id} is in the baseline but was not scored (a row was removed or renamed: update the baseline in a reviewed change)"))
            .collect()
    }

    /// The terminal table: row, hop, target, outcome, evidence, time.
    pub fn table(&self) -> String {
        let mut out = format!(
            "{:<5} {:<11} {:<9} {:<12} {:>7}  evidence\n",
            "row", "hop", "target", "outcome", "time"
        );
        for s in &self.rows {
            let mark = if s.problem().is_some() { "✗" } else { "✓" };
            out.push_str(&format!(
                "{:<5} {:<11} {:<9} {mark} {:<10} {:>6.1}s  {}\n",
                s.id,
                s.hop,
                target_word(s.target),
                s.outcome.word(),
                s.ms as f64 / 1000.0,
                s.evidence
            ));
        }
        for c in &self.controls {
            let mark = if c.went_red() { "✓" } else { "✗" };
            out.push_str(&format!(
                "control {mark} {} ({}): {} — {}\n",
                c.name,
                c.row,
                c.outcome.word(),
                c.evidence
            ));
        }
        out
    }

    /// The Markdown report.
    pub fn markdown(&self) -> String {
        let mut out = format!("# Gate scorecard\n\nGenerated {}.\n\n", self.generated_at);
        out.push_str("| row | hop | target | outcome | time | evidence |\n| --- | --- | --- | --- | --- | --- |\n");
        for s in &self.rows {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {:.1} s | {} |\n",
                s.id,
                s.hop,
                target_word(s.target),
                s.outcome.word(),
                s.ms as f64 / 1000.0,
                s.evidence.replace('|', "\\|")
            ));
        }
        out.push_str("\n## Negative controls\n\n| control | row | outcome | evidence |\n| --- | --- | --- | --- |\n");
        for c in &self.controls {
            out.push_str(&format!(
                "| {} | {} | {} | {} |\n",
                c.name,
                c.row,
                c.outcome.word(),
                c.evidence.replace('|', "\\|")
            ));
        }
        let problems = self.problems();
        out.push_str(&format!(
            "\n## Verdict\n\n{}\n",
            if problems.is_empty() {
                "passed".to_string()
            } else {
                format!("failed:\n\n- {}", problems.join("\n- "))
            }
        ));
        out
    }

    /// JUnit XML: one test case per row and per control; anything short of its target fails.
    pub fn junit(&self) -> String {
        let failures = self.rows.iter().filter(|s| s.problem().is_some()).count()
            + self.controls.iter().filter(|c| !c.went_red()).count();
        let total = self.rows.len() + self.controls.len();
        let mut out = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"reticle-gate\" tests=\"{total}\" failures=\"{failures}\">\n<testsuite name=\"fragility-inventory\" tests=\"{total}\" failures=\"{failures}\">\n"
        );
        for s in &self.rows {
            out.push_str(&format!(
                "  <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\">",
                xml(s.hop),
                s.id,
                s.ms as f64 / 1000.0
            ));
            if let Some(problem) = s.problem() {
                out.push_str(&format!(
                    "<failure message=\"{}\">{}</failure>",
                    xml(&problem),
                    xml(&s.evidence)
                ));
            }
            out.push_str("</testcase>\n");
        }
        for c in &self.controls {
            out.push_str(&format!(
                "  <testcase classname=\"negative-control\" name=\"{}\">",
                xml(&c.name)
            ));
            if !c.went_red() {
                out.push_str(&format!(
                    "<failure message=\"the checker did not go red on the control\">{}</failure>",
                    xml(&c.evidence)
                ));
            }
            out.push_str("</testcase>\n");
        }
        out.push_str("</testsuite>\n</testsuites>\n");
        out
    }
}

fn target_word(target: Target) -> &'static str {
    match target {
        Target::Survived => "survived",
        Target::Surfaced => "surfaced",
    }
}

fn xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory;

    fn score(id: &str, outcome: RowOutcome, baseline: Option<RowOutcome>) -> Score {
        Score::new(
            inventory::find(id).unwrap(),
            Judgement::new(outcome, "because"),
            10,
            baseline,
        )
    }

    fn card(rows: Vec<Score>, control: RowOutcome) -> Scorecard {
        Scorecard {
            generated_at: "now".into(),
            selection: None,
            rows,
            controls: vec![Control {
                name: "stand-in serve".into(),
                row: "H3.1".into(),
                outcome: control,
                evidence: "e".into(),
            }],
        }
    }

    #[test]
    fn silent_below_target_regressed_and_tame_controls_all_fail_the_gate() {
        let ok = card(
            vec![score(
                "H3.1",
                RowOutcome::Surfaced,
                Some(RowOutcome::Surfaced),
            )],
            RowOutcome::Silent,
        );
        assert!(ok.passed(), "{:?}", ok.problems());
        for bad in [
            card(
                vec![score("H3.1", RowOutcome::Silent, None)],
                RowOutcome::Silent,
            ),
            card(
                vec![score("H3.5", RowOutcome::Surfaced, None)],
                RowOutcome::Silent,
            ),
            card(
                vec![score("H3.1", RowOutcome::Inconclusive, None)],
                RowOutcome::Silent,
            ),
            card(
                vec![
                    score("H3.5", RowOutcome::Survived, None),
                    score("H3.1", RowOutcome::Surfaced, Some(RowOutcome::Survived)),
                ],
                RowOutcome::Silent,
            ),
            card(
                vec![score("H3.1", RowOutcome::Surfaced, None)],
                RowOutcome::Surfaced,
            ),
        ] {
            assert!(!bad.passed(), "{}", bad.table());
        }
    }

    #[test]
    fn a_baseline_never_records_a_silent_or_inconclusive_row() {
        let good = card(
            vec![score("H3.1", RowOutcome::Surfaced, None)],
            RowOutcome::Silent,
        );
        assert_eq!(good.as_baseline().unwrap()["H3.1"], "surfaced");
        for bad in [RowOutcome::Silent, RowOutcome::Inconclusive] {
            let c = card(vec![score("H3.1", bad, None)], RowOutcome::Silent);
            assert!(c.as_baseline().unwrap_err().contains("H3.1"));
        }
    }

    #[test]
    fn a_whole_run_reports_baseline_rows_it_did_not_score() {
        let baseline = parse_baseline(r#"{"H3.1":"surfaced","H9.9":"survived"}"#).unwrap();
        let mut c = card(
            vec![score("H3.1", RowOutcome::Surfaced, None)],
            RowOutcome::Silent,
        );
        assert!(c.unrun_baseline_rows(&baseline).is_empty(), "no selection");
        c.selection = Some(Selection::new(&["H3.1".to_string()], None));
        assert!(c.unrun_baseline_rows(&baseline).is_empty(), "an --only run");
        c.selection = Some(Selection::new(&[], None));
        let unrun = c.unrun_baseline_rows(&baseline);
        assert_eq!(unrun.len(), 1);
        assert!(unrun[0].starts_with("H9.9"));
    }

    #[test]
    fn renders_every_format_with_every_row() {
        let c = card(
            vec![
                score("H3.1", RowOutcome::Surfaced, None),
                score("H3.6", RowOutcome::Silent, None),
            ],
            RowOutcome::Silent,
        );
        for text in [
            c.table(),
            c.markdown(),
            c.junit(),
            serde_json::to_string(&c).unwrap(),
        ] {
            assert!(text.contains("H3.1") && text.contains("H3.6"), "{text}");
        }
        assert!(c.junit().contains("failures=\"1\""));
        assert_eq!(
            parse_baseline(r#"{"H3.1":"surfaced"}"#).unwrap()["H3.1"],
            RowOutcome::Surfaced
        );
        assert!(parse_baseline(r#"{"H3.1":"great"}"#).is_err());
    }

    #[test]
    fn a_control_is_red_when_silent_or_below_a_survived_target() {
        let control =
            |row: &str, outcome| Control::of("stand-in", row, Judgement::new(outcome, "e"));
        assert!(control("H3.1", RowOutcome::Silent).went_red());
        assert!(control("H3.3", RowOutcome::Surfaced).went_red());
        assert!(!control("H3.1", RowOutcome::Surfaced).went_red());
        assert!(!control("H3.3", RowOutcome::Inconclusive).went_red());
        assert!(!control("H3.3", RowOutcome::Survived).went_red());
    }
}
