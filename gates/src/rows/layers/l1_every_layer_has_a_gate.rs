//! L1: every layer of the system has a gate, and its gate tests ran and passed. Its scenario,
//! its judge and the judge's unit tests; it reads the system map, the tree and a JUnit report,
//! and must not run any gate itself.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::controls::StandIn;
use crate::history::{Actor, History, Op, OpType};
use crate::judge::{Judgement, RowOutcome};
use crate::junit::SuiteRun;
use crate::rows::RowGate;
use crate::scenarios::kit::judged;
use crate::scenarios::{GateEnv, Ran};

/// The layers every release must gate, as the system map's table spells them.
pub const LAYERS: &[&str] = &[
    "stdio",
    "SSE/POST",
    "daemon",
    "bridge",
    "SDK",
    "tools",
    "verdict",
    "telemetry",
    "install",
    "client",
];

/// The heading of the gate table.
const TABLE_HEADING: &str = "## 7. Where the gates are";

/// What the table says about one layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerGate {
    pub layer: String,
    /// Paths the row names that exist.
    pub found: Vec<String>,
    /// Paths the row names that do not exist.
    pub missing: Vec<String>,
    pub status: String,
}

impl LayerGate {
    fn gated(&self) -> bool {
        !self.found.is_empty() && !self.status.contains("not built")
    }
}

/// Where `reticle gate --junit FILE` puts the report for L1 (read when the row runs).
pub const JUNIT_VAR: &str = "RETICLE_GATE_JUNIT";

/// L1: reads the gate table in `docs/system-map.md` ("Where the gates are") and checks, for each
/// layer the inventory names, that its row names at least one gate file that exists in the
/// repository and is not marked "not built"; every path a row names must exist (a table that
/// points at a deleted file is a doc that lies). Given the nextest JUnit report of the same
/// commit (`reticle gate --junit FILE`, passed as [`JUNIT_VAR`]), it then scores from execution:
/// each layer's integration test files (`<crate>/tests/<stem>.rs`, the suite `<crate>::<stem>`)
/// must have run, and passed (a directory of reports, one per battery part, counts as one run);
/// a layer whose tests did not run is silent. Without a report it says it judged the doc only.
/// The table as read and the suites the report held are recorded in the history, and the judge
/// ([`judge_recorded_layers`]) reads them from there alone, so `reticle gate analyze` re-judges it.
pub async fn every_layer_has_a_gate(_env: &GateEnv) -> Ran {
    let report = std::env::var_os(JUNIT_VAR).map(PathBuf::from);
    layers_ran_in(report.as_deref()).await
}

/// L1's scenario and judge with the JUnit report `report` (none: the doc alone); the negative
/// control gives a stand-in report.
pub async fn layers_ran_in(report: Option<&Path>) -> Ran {
    let history = History::new();
    let root = harness::fixture_app::repo_root();
    let doc = std::fs::read_to_string(root.join("docs/system-map.md"));
    history.invoke("read_gate_table", json!({ "doc": "docs/system-map.md" }));
    match doc {
        Ok(doc) => {
            let rows = gate_table(&doc, &root);
            history.complete(
                OpType::Ok,
                "read_gate_table",
                json!({ "rows": rows.iter().map(|r| json!({
                    "layer": r.layer, "found": r.found, "missing": r.missing, "status": r.status,
                })).collect::<Vec<_>>() }),
            );
        }
        Err(e) => {
            history.record(
                Actor::Harness,
                OpType::Fail,
                "read_gate_table",
                json!({ "message": e.to_string() }),
            );
            return judged(history, judge_recorded_layers);
        }
    }
    if let Some(report) = report {
        history.invoke("read_junit", json!({ "report": report }));
        match crate::junit::read_reports(report) {
            Ok(suites) => history.complete(
                OpType::Ok,
                "read_junit",
                json!({ "suites": suites.iter().map(|(name, run)| json!({
                    "suite": name, "tests": run.tests, "failed": run.failed,
                })).collect::<Vec<_>>() }),
            ),
            Err(e) => history.complete(
                OpType::Fail,
                "read_junit",
                json!({ "message": e.to_string() }),
            ),
        };
    }
    judged(history, judge_recorded_layers)
}

/// L1's judge over what its history recorded: the gate table as read (`read_gate_table`) and,
/// when a report was given, the suites it held (`read_junit`); [`judge_layers`], then
/// [`judge_layers_ran`].
pub fn judge_recorded_layers(ops: &[Op]) -> Judgement {
    let done = |f: &str| {
        ops.iter()
            .rfind(|o| o.f == f && o.op_type != OpType::Invoke)
    };
    let Some(table) = done("read_gate_table").filter(|o| o.op_type == OpType::Ok) else {
        let why = done("read_gate_table")
            .map(|o| crate::judge::text(&o.value))
            .unwrap_or_else(|| "it was never read".to_string());
        return Judgement::new(
            RowOutcome::Inconclusive,
            format!("docs/system-map.md could not be read: {why}"),
        );
    };
    let rows: Vec<LayerGate> = table.value["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|row| LayerGate {
            layer: word(&row["layer"]),
            found: words(&row["found"]),
            missing: words(&row["missing"]),
            status: word(&row["status"]),
        })
        .collect();
    let on_paper = judge_layers(&rows);
    let Some(junit) = done("read_junit") else {
        return Judgement::new(
            on_paper.outcome,
            format!(
                "{} (from the doc only: no --junit report was given, so not from what ran)",
                on_paper.evidence
            ),
        );
    };
    if junit.op_type != OpType::Ok {
        let report = ops
            .iter()
            .find(|o| o.f == "read_junit" && o.op_type == OpType::Invoke)
            .map(|o| word(&o.value["report"]))
            .unwrap_or_default();
        return Judgement::new(
            RowOutcome::Inconclusive,
            format!(
                "the JUnit report {report} could not be read: {}",
                crate::judge::text(&junit.value)
            ),
        );
    }
    if on_paper.outcome != RowOutcome::Survived {
        return on_paper;
    }
    let suites: BTreeMap<String, SuiteRun> = junit.value["suites"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|suite| {
            let count = |key: &str| suite[key].as_u64().unwrap_or(0) as usize;
            (
                word(&suite["suite"]),
                SuiteRun {
                    tests: count("tests"),
                    failed: count("failed"),
                },
            )
        })
        .collect();
    judge_layers_ran(&rows, &suites)
}

/// A recorded string.
fn word(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_string()
}

/// A recorded list of strings.
fn words(value: &Value) -> Vec<String> {
    value.as_array().into_iter().flatten().map(word).collect()
}

/// The nextest suite of an integration test file (`gates/tests/hop2_link_faults.rs` → `gates::hop2_link_faults`).
pub fn suite_of(path: &str) -> Option<String> {
    let path = Path::new(path);
    let stem = path.file_stem()?.to_str()?;
    let tests = path.parent()?;
    let krate = tests.parent()?.to_str()?;
    (tests.file_name()? == "tests" && path.extension()? == "rs" && !stem.contains('*'))
        .then(|| format!("{krate}::{stem}"))
}

/// Survived when every layer's integration test files ran (their suites are in the report) and
/// none failed; silent when a layer's tests did not run or one failed.
pub fn judge_layers_ran(rows: &[LayerGate], suites: &BTreeMap<String, SuiteRun>) -> Judgement {
    let mut tests = 0;
    for layer in LAYERS {
        let named: Vec<String> = rows
            .iter()
            .filter(|r| r.layer == *layer)
            .flat_map(|r| r.found.iter().filter_map(|p| suite_of(p)))
            .collect();
        let ran: Vec<(&String, &SuiteRun)> = named
            .iter()
            .filter_map(|n| suites.get(n).map(|run| (n, run)))
            .filter(|(_, run)| run.tests > 0)
            .collect();
        if ran.is_empty() {
            return Judgement::new(
                RowOutcome::Silent,
                format!(
                    "the {layer} layer's gate tests did not run in the report (none of: {})",
                    if named.is_empty() {
                        "no test file named".to_string()
                    } else {
                        named.join(", ")
                    }
                ),
            );
        }
        if let Some((name, run)) = ran.iter().find(|(_, run)| run.failed > 0) {
            return Judgement::new(
                RowOutcome::Silent,
                format!(
                    "the {layer} layer's gate {name} failed {} of {} tests",
                    run.failed, run.tests
                ),
            );
        }
        tests += ran.iter().map(|(_, run)| run.tests).sum::<usize>();
    }
    Judgement::new(
        RowOutcome::Survived,
        format!(
            "all {} layers have a gate whose tests ran and passed in the JUnit report ({tests} tests)",
            LAYERS.len()
        ),
    )
}

/// The rows of the gate table, each with its named paths resolved against `root`.
pub fn gate_table(doc: &str, root: &Path) -> Vec<LayerGate> {
    doc.lines()
        .skip_while(|l| !l.starts_with(TABLE_HEADING))
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .filter_map(|l| {
            let cells: Vec<&str> = l.trim().trim_matches('|').split(" | ").collect();
            match cells.as_slice() {
                [layer, gate, status] if LAYERS.contains(&layer.trim()) => {
                    let (found, missing) = named_paths(gate, root);
                    Some(LayerGate {
                        layer: layer.trim().to_string(),
                        found,
                        missing,
                        status: status.trim().to_string(),
                    })
                }
                _ => None,
            }
        })
        .collect()
}

/// The file paths a gate cell names in backticks, split into those that exist and those that
/// do not. A bare file name (`hop3_heartbeat.rs`) lives in the folder of the last full path before
/// it; a `*` matches any file of that folder with the rest of the name.
fn named_paths(cell: &str, root: &Path) -> (Vec<String>, Vec<String>) {
    let mut found = Vec::new();
    let mut missing = Vec::new();
    let mut folder: Option<PathBuf> = None;
    for (i, token) in cell.split('`').enumerate() {
        if i % 2 == 0 || token.contains(' ') || !looks_like_a_path(token) {
            continue;
        }
        let path = if token.contains('/') {
            let path = PathBuf::from(token.trim_end_matches('/'));
            folder = path.parent().map(Path::to_path_buf);
            if token.ends_with('/') {
                folder = Some(path.clone());
            }
            path
        } else {
            match &folder {
                Some(folder) => folder.join(token),
                None => PathBuf::from(token),
            }
        };
        let shown = path.to_string_lossy().to_string();
        if exists(&root.join(&path)) {
            found.push(shown);
        } else {
            missing.push(shown);
        }
    }
    (found, missing)
}

fn looks_like_a_path(token: &str) -> bool {
    token.ends_with(".rs") || token.ends_with(".js") || token.ends_with('/')
}

/// Whether `path` exists; a `*` in its file name matches any run of characters.
fn exists(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let Some((head, tail)) = name.split_once('*') else {
        return path.exists();
    };
    let Some(dir) = path.parent() else {
        return false;
    };
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.filter_map(Result::ok).any(|e| {
            let n = e.file_name().to_string_lossy().to_string();
            n.starts_with(head) && n.ends_with(tail) && n.len() >= head.len() + tail.len()
        })
    })
}

/// Survived when every layer has a gate and no row names a file that is not there; silent when
/// a layer has none (its failures have nobody watching); inconclusive when the table is not
/// where the doc should have it.
pub fn judge_layers(rows: &[LayerGate]) -> Judgement {
    if rows.is_empty() {
        return Judgement::new(
            RowOutcome::Inconclusive,
            format!("no gate table under \"{TABLE_HEADING}\" in docs/system-map.md"),
        );
    }
    let ungated: Vec<&str> = LAYERS
        .iter()
        .filter(|layer| !rows.iter().any(|r| r.layer == **layer && r.gated()))
        .copied()
        .collect();
    let stale: Vec<String> = rows
        .iter()
        .flat_map(|r| r.missing.iter().map(move |m| format!("{} → {m}", r.layer)))
        .collect();
    if !ungated.is_empty() {
        return Judgement::new(
            RowOutcome::Silent,
            format!(
                "{} of {} layers have a gate; none for: {}",
                LAYERS.len() - ungated.len(),
                LAYERS.len(),
                ungated.join(", ")
            ),
        );
    }
    if !stale.is_empty() {
        return Judgement::new(
            RowOutcome::Silent,
            format!(
                "the gate table names files that do not exist: {}",
                stale.join(", ")
            ),
        );
    }
    let files: usize = rows.iter().map(|r| r.found.len()).sum();
    Judgement::new(
        RowOutcome::Survived,
        format!(
            "all {} layers have a gate ({files} gate files named, every one present)",
            LAYERS.len()
        ),
    )
}

/// L1 in the row table.
pub const L1: RowGate = RowGate {
    id: "L1",
    file: file!(),
    scenario: |env| Box::pin(every_layer_has_a_gate(env)),
    judge: judge_recorded_layers,
    controls: &[StandIn::ReportWithoutALayer],
};

#[cfg(test)]
mod tests {
    use super::*;

    fn table(rows: &[(&str, &str, &str)]) -> String {
        let mut doc =
            format!("# x\n\n{TABLE_HEADING}\n\n| layer | gate | status |\n| --- | --- | --- |\n");
        for (layer, gate, status) in rows {
            doc.push_str(&format!("| {layer} | {gate} | {status} |\n"));
        }
        doc.push_str("\n## 8. Next\n| stdio | `nope.rs` | x |\n");
        doc
    }

    /// The table of a map whose every layer names `hop3_gate_rows.rs` and `hop3_heartbeat.rs`.
    fn every_layer_gated_by_two_files() -> Vec<LayerGate> {
        let root = harness::fixture_app::repo_root();
        let rows: Vec<(&str, &str, &str)> = LAYERS
            .iter()
            .map(|l| {
                (
                    *l,
                    "`gates/tests/hop3_gate_rows.rs`, `hop3_heartbeat.rs`",
                    "in the battery",
                )
            })
            .collect();
        gate_table(&table(&rows), &root)
    }

    #[test]
    fn every_layer_gated_by_files_that_exist_survives() {
        let parsed = every_layer_gated_by_two_files();
        assert_eq!(parsed.len(), LAYERS.len(), "the next section is not read");
        assert_eq!(parsed[0].found.len(), 2, "{parsed:?}");
        assert_eq!(judge_layers(&parsed).outcome, RowOutcome::Survived);
    }

    #[test]
    fn a_layer_without_a_gate_or_a_gate_that_is_not_there_is_silent() {
        let root = harness::fixture_app::repo_root();
        let mut rows: Vec<(&str, &str, &str)> = LAYERS
            .iter()
            .map(|l| (*l, "`sdk/test/*.test.js`", "in the battery"))
            .collect();
        rows[9] = ("client", "—", "not built");
        let judged = judge_layers(&gate_table(&table(&rows), &root));
        assert_eq!(judged.outcome, RowOutcome::Silent);
        assert!(
            judged.evidence.contains("none for: client"),
            "{}",
            judged.evidence
        );

        rows[9] = (
            "client",
            "`gates/tests/no_such_gate.rs`, `sdk/test/*.test.js`",
            "in the battery",
        );
        let judged = judge_layers(&gate_table(&table(&rows), &root));
        assert_eq!(judged.outcome, RowOutcome::Silent);
        assert!(
            judged.evidence.contains("no_such_gate.rs"),
            "{}",
            judged.evidence
        );

        assert_eq!(
            judge_layers(&gate_table("# no table", &root)).outcome,
            RowOutcome::Inconclusive
        );
    }

    #[test]
    fn a_layer_whose_tests_did_not_run_or_failed_is_silent() {
        let parsed = every_layer_gated_by_two_files();
        let run = |tests, failed| SuiteRun { tests, failed };
        let mut suites = BTreeMap::from([("gates::hop3_heartbeat".to_string(), run(3, 0))]);
        assert_eq!(
            judge_layers_ran(&parsed, &suites).outcome,
            RowOutcome::Survived
        );
        suites.insert("gates::hop3_heartbeat".into(), run(3, 1));
        assert_eq!(
            judge_layers_ran(&parsed, &suites).outcome,
            RowOutcome::Silent
        );
        let judged = judge_layers_ran(&parsed, &BTreeMap::new());
        assert_eq!(judged.outcome, RowOutcome::Silent);
        assert!(
            judged.evidence.contains("did not run"),
            "{}",
            judged.evidence
        );
        assert_eq!(
            suite_of("gates/tests/hop2_link_faults.rs").as_deref(),
            Some("gates::hop2_link_faults")
        );
        assert_eq!(suite_of("gates/src/trace.rs"), None);
    }
}
