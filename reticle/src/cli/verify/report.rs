//! What `reticle verify` shows and writes: a progress line per flow as it finishes (a bar
//! redrawn in place on a terminal, one plain line each otherwise, as in CI), the table (flow,
//! verdict, failing step, time), and the files asked for (JUnit XML, the run's JSON, Markdown),
//! each rendered from the run document by the run export code.
//!
//! This module renders and writes; it must not decide a verdict.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use serde_json::Value;

use crate::flow::runs::{junit, markdown};

/// Progress over a run of `total` flows.
pub struct Progress {
    total: usize,
    done: usize,
    terminal: bool,
}

/// The width of the bar, in cells.
const BAR_CELLS: usize = 24;

fn seconds(ms: &Value) -> String {
    format!("{:.1} s", ms.as_u64().unwrap_or(0) as f64 / 1000.0)
}

fn failing_step(record: &Value) -> String {
    record["failingStep"]
        .as_u64()
        .map_or_else(|| "-".to_string(), |s| s.to_string())
}

impl Progress {
    pub fn new(total: usize) -> Self {
        Self {
            total,
            done: 0,
            terminal: std::io::stdout().is_terminal(),
        }
    }

    /// One flow finished with `record`.
    pub fn finished(&mut self, record: &Value) {
        self.done += 1;
        let name = record["name"].as_str().unwrap_or("(unnamed)");
        let verdict = record["verified"].as_str().unwrap_or("unknown");
        let mut line = format!(
            "[{}/{}] {name}: {verdict} ({})",
            self.done,
            self.total,
            seconds(&record["durationMs"])
        );
        if let Some(step) = record["failingStep"].as_u64() {
            line.push_str(&format!(", failing step {step}"));
        }
        let mut out = std::io::stdout().lock();
        if self.terminal {
            let filled = BAR_CELLS * self.done / self.total.max(1);
            let bar = format!("{}{}", "#".repeat(filled), ".".repeat(BAR_CELLS - filled));
            let _ = write!(out, "\r\x1b[2K[{bar}] {line}");
            if self.done == self.total {
                let _ = writeln!(out);
            }
        } else {
            let _ = writeln!(out, "{line}");
        }
        let _ = out.flush();
    }
}

/// The table of a run's flows.
pub fn table(flows: &[Value]) -> String {
    let rows: Vec<[String; 4]> = flows
        .iter()
        .map(|f| {
            [
                f["name"].as_str().unwrap_or("(unnamed)").to_string(),
                f["verified"].as_str().unwrap_or("unknown").to_string(),
                failing_step(f),
                seconds(&f["durationMs"]),
            ]
        })
        .collect();
    let header = [
        "flow".to_string(),
        "verdict".into(),
        "failing step".into(),
        "time".into(),
    ];
    let mut widths = header.clone().map(|h| h.chars().count());
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: &[String; 4]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        format!("{}\n", padded.join("  ").trim_end())
    };
    let mut text = line(&header);
    for row in &rows {
        text.push_str(&line(row));
    }
    text
}

/// The files `--junit`, `--json` and `--markdown` asked for.
#[derive(Debug, Default, Clone)]
pub struct Outputs {
    pub junit: Option<PathBuf>,
    pub json: Option<PathBuf>,
    pub markdown: Option<PathBuf>,
}

impl Outputs {
    /// Why an asked-for file could not be written, found before anything runs: a path that is a
    /// directory, or one whose folder does not exist. (Nothing is created or truncated here.)
    pub fn obstacle(&self) -> Option<String> {
        let asked = [
            ("--junit", &self.junit),
            ("--json", &self.json),
            ("--markdown", &self.markdown),
        ];
        asked.into_iter().find_map(|(flag, path)| {
            let path = path.as_ref()?;
            if path.is_dir() {
                return Some(format!(
                    "{flag} {} is a directory; name a file",
                    path.display()
                ));
            }
            let folder = match path.parent() {
                Some(folder) if !folder.as_os_str().is_empty() => folder,
                _ => std::path::Path::new("."),
            };
            (!folder.is_dir()).then(|| {
                format!(
                    "{flag} {}: its folder {} does not exist",
                    path.display(),
                    folder.display()
                )
            })
        })
    }

    /// Writes each asked-for file from the run document; a sentence per file that failed.
    pub fn write(&self, run: &Value) -> Vec<String> {
        let files = [
            (&self.junit, junit(run)),
            (
                &self.json,
                serde_json::to_string_pretty(run).unwrap_or_default() + "\n",
            ),
            (&self.markdown, markdown(run)),
        ];
        files
            .into_iter()
            .filter_map(|(path, text)| {
                let path = path.as_ref()?;
                std::fs::write(path, text)
                    .err()
                    .map(|e| format!("{} could not be written: {e}", path.display()))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_report_file_that_cannot_be_written_is_named_before_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let at = |path: PathBuf| Outputs {
            markdown: Some(path),
            ..Outputs::default()
        };
        let directory = at(dir.path().to_path_buf()).obstacle().unwrap();
        assert!(directory.contains("--markdown") && directory.contains("is a directory"));
        let missing = at(dir.path().join("no/such/report.md")).obstacle().unwrap();
        assert!(missing.contains("does not exist"), "{missing}");
        // Control: a new file in a folder that exists, and a bare name in the working directory.
        assert_eq!(at(dir.path().join("report.md")).obstacle(), None);
        assert_eq!(at(PathBuf::from("report.md")).obstacle(), None);
        assert_eq!(Outputs::default().obstacle(), None);
    }

    #[test]
    fn the_table_has_a_row_per_flow_with_its_failing_step() {
        let text = table(&[
            json!({"name": "sign-in", "verified": "yes", "durationMs": 1200}),
            json!({"name": "checkout", "verified": "no", "failingStep": 4, "durationMs": 300}),
        ]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines[0].starts_with("flow"), "{text}");
        assert!(
            lines[2].contains("checkout") && lines[2].contains(" 4 "),
            "{text}"
        );
        assert!(lines[1].contains("-"), "{text}");
    }
}
