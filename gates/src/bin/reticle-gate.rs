//! `reticle gate` (reached as `reticle gate` through the CLI's subcommand dispatch): runs every
//! inventory row's scenario against the real system, the negative controls, and prints the
//! scorecard; writes JSON, Markdown and JUnit XML, and each row's history as it finishes (so a
//! run cut short keeps what it did); exits non-zero on any silent row, any row below
//! its target, any regression against the baseline, or any control its checker did not go red on.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand};
use gates::history::History;
use gates::inventory::{INVENTORY, Row};
use gates::judge::{Judgement, RowOutcome};
use gates::parts::{self, Partition, Selection, read_part};
use gates::rows;
use gates::scenarios::GateEnv;
use gates::scorecard::{Score, Scorecard, exit, parse_baseline};

/// Score every row of the fragility inventory against the real system.
///
/// Builds nothing: it runs the `reticle` binary that sits next to it. Each row's scenario starts
/// its own daemon on a free loopback port with a private state dir, injects its fault, records a
/// history and judges it: survived, surfaced, silent or inconclusive (never a pass).
///
/// Across CI runners: run `reticle gate --partition K/N --out part-K` on N runners (each row
/// lands in exactly one part, chosen by its id), then `reticle gate merge part-1 ... part-N`.
/// Exit codes: 0 passed, 1 failed (a row silent, below its target or regressed, a control not
/// red, a baseline problem), 2 usage.
#[derive(Debug, Parser)]
#[command(
    name = "reticle gate",
    bin_name = "reticle gate",
    version,
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<GateCommand>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Debug, Subcommand)]
enum GateCommand {
    /// Merge the reports of partitioned runs (`--partition K/N`) into one scorecard, with the
    /// same exit rules as a whole run; a row no part scored, or two parts scored, is an error.
    Merge {
        /// The report folders of the parts (each holds the scorecard.json its run wrote).
        #[arg(required = true)]
        parts: Vec<PathBuf>,
        /// Where to write the merged scorecard.json, scorecard.md and junit.xml
        /// (default .reticle/runs/gate-merged-<timestamp>/).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Re-judge the stored histories of a finished run (its --out folder) offline and print the
    /// same scorecard, with the same exit rules: every row's judge reads its history alone (a
    /// row this build has no such judge for keeps its stored outcome, marked as not re-judged).
    /// Runs nothing.
    Analyze {
        /// The report folder of a finished run (scorecard.json and histories/).
        dir: PathBuf,
    },
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    /// Only these rows, comma-separated (e.g. H3.1,H3.6).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Run only part K of N (e.g. 2/3): a row's part depends on its id alone, so N runs with
    /// K = 1..N score every row exactly once. Each part runs the controls of its own rows.
    #[arg(long, value_parser = Partition::parse)]
    partition: Option<Partition>,
    /// Run TCP faults through this Toxiproxy server instead of the embedded fault proxy.
    #[arg(long)]
    toxiproxy: Option<String>,
    /// The nextest JUnit report of the same commit (`cargo nextest run --profile ci`), or a
    /// directory of them (one per battery part, added up): L1 is then scored from it (each
    /// layer's gate tests ran and passed), not from the doc. A report that does not name this
    /// gate's commit (every battery part must) is refused.
    #[arg(long)]
    junit: Option<PathBuf>,
    /// Where to write scorecard.json, scorecard.md, junit.xml and histories/<row>.jsonl (every
    /// operation each row's scenario performed, one JSON object per line)
    /// (default .reticle/runs/gate-<timestamp>/).
    #[arg(long)]
    out: Option<PathBuf>,
    /// The committed baseline to compare against; a missing or unreadable baseline is an error.
    #[arg(long, default_value = "gates/baseline.json")]
    baseline: PathBuf,
    /// Write this run's outcomes to the baseline file instead of comparing (after a reviewed
    /// improvement). Refused when a row is silent or inconclusive.
    #[arg(long)]
    update_baseline: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => match cli.command {
            Some(GateCommand::Merge { parts, out }) => merge(&parts, out),
            Some(GateCommand::Analyze { dir }) => analyze(&dir),
            None => rt.block_on(gate(cli.run)),
        },
        Err(err) => {
            eprintln!("reticle gate: cannot start the async runtime: {err}");
            ExitCode::from(exit::FAILED)
        }
    }
}

async fn gate(args: RunArgs) -> ExitCode {
    let reticle = match sibling_reticle() {
        Ok(path) => path,
        Err(sentence) => return usage(&sentence),
    };
    // SAFETY: set before any thread reads the environment.
    unsafe { std::env::set_var(harness::binaries::BIN_VAR, &reticle) };
    if let Some(url) = &args.toxiproxy {
        // SAFETY: as above; the nemesis reads it when a scenario starts.
        unsafe { std::env::set_var(gates::nemesis::TOXIPROXY_URL, url) };
    }
    if let Some(report) = &args.junit {
        if let Err(sentence) =
            gates::built_from::check_reports(report, gates::built_from::BUILT_FROM)
        {
            return usage(&sentence);
        }
        // SAFETY: as above; L1 reads it when its scenario runs.
        unsafe {
            std::env::set_var(
                gates::rows::layers::l1_every_layer_has_a_gate::JUNIT_VAR,
                report,
            )
        };
    }
    match std::env::var(gates::nemesis::TOXIPROXY_URL) {
        Ok(url) if !url.trim().is_empty() => {
            eprintln!("reticle gate: TCP faults go through the Toxiproxy server at {url}")
        }
        _ => eprintln!("reticle gate: TCP faults go through the embedded toxics server"),
    }
    let unknown: Vec<&String> = args
        .only
        .iter()
        .filter(|id| gates::inventory::find(id).is_none())
        .collect();
    if !unknown.is_empty() {
        return usage(&format!(
            "unknown row id(s) {unknown:?}; rows are {}",
            INVENTORY
                .iter()
                .map(|r| r.id)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let baseline = if args.update_baseline {
        BTreeMap::new()
    } else {
        match std::fs::read_to_string(&args.baseline) {
            Ok(text) => match parse_baseline(&text) {
                Ok(b) => b,
                Err(sentence) => return usage(&format!("{}: {sentence}", args.baseline.display())),
            },
            Err(err) => {
                return usage(&format!(
                    "cannot read the baseline {} ({err}); run from the repository root, name it with --baseline, or record one with --update-baseline",
                    args.baseline.display()
                ));
            }
        }
    };
    let dir = report_dir(args.out.clone(), "gate");
    let histories = dir.join("histories");
    if let Err(err) = std::fs::create_dir_all(&histories) {
        return usage(&format!(
            "cannot create the report folder {}: {err}; choose another with --out",
            histories.display()
        ));
    }
    let swept = harness::marker::sweep_orphans();
    if !swept.is_empty() {
        eprintln!(
            "reticle gate: swept {} orphan(s) from an earlier run: {swept:?}",
            swept.len()
        );
    }
    let selection = Selection::new(&args.only, args.partition);
    let rows: Vec<&Row> = selection.rows_to_run();
    if let Some(part) = args.partition {
        eprintln!(
            "reticle gate: partition {part}: {} of {} selected row(s)",
            rows.len(),
            selection.rows.len()
        );
    }
    let env = GateEnv { reticle };
    let mut scores = Vec::new();
    for (n, row) in rows.iter().enumerate() {
        let started = Instant::now();
        let (judgement, history) = run_caught(row.id, &env).await;
        let ms = started.elapsed().as_millis() as u64;
        if let Some(history) = history
            && let Err(err) = write_history(&histories, row.id, &history)
        {
            eprintln!("reticle gate: could not write {}'s history: {err}", row.id);
        }
        let score = Score::new(row, judgement, ms, baseline.get(row.id).copied());
        eprintln!(
            "[{:>2}/{}] {:<5} {:<11} {:<12} {:>6.1}s  {}",
            n + 1,
            rows.len(),
            row.id,
            row.hop.label(),
            score.outcome.word(),
            ms as f64 / 1000.0,
            score.evidence
        );
        scores.push(score);
    }
    eprintln!("reticle gate: running the negative controls of the rows run");
    let ids: Vec<&str> = rows.iter().map(|r| r.id).collect();
    let card = Scorecard {
        generated_at: now(),
        selection: Some(selection),
        rows: scores,
        controls: gates::controls::for_rows(&ids).await,
    };
    println!("{}", card.table());
    if let Err(err) = write_reports(&card, &dir) {
        eprintln!("reticle gate: could not write the reports: {err}");
        return ExitCode::from(exit::FAILED);
    }
    let mut problems = card.problems();
    problems.extend(card.unrun_baseline_rows(&baseline));
    if args.update_baseline {
        let recorded = match card.as_baseline() {
            Ok(recorded) => recorded,
            Err(sentence) => {
                eprintln!("reticle gate: {sentence}");
                return ExitCode::from(exit::FAILED);
            }
        };
        let body = serde_json::to_string_pretty(&recorded).unwrap_or_default();
        if let Err(err) = std::fs::write(&args.baseline, body + "\n") {
            eprintln!(
                "reticle gate: could not write {}: {err}",
                args.baseline.display()
            );
            return ExitCode::from(exit::FAILED);
        }
        eprintln!(
            "reticle gate: wrote the baseline {}",
            args.baseline.display()
        );
    }
    verdict(&card, &problems)
}

/// Prints the verdict line and turns it into the exit code.
fn verdict(card: &Scorecard, problems: &[String]) -> ExitCode {
    let inconclusive = card
        .rows
        .iter()
        .filter(|s| s.outcome == RowOutcome::Inconclusive)
        .count();
    if problems.is_empty() {
        println!(
            "gate passed: {} row(s), {} control(s), every control went red",
            card.rows.len(),
            card.controls.len()
        );
        ExitCode::from(exit::PASSED)
    } else {
        println!(
            "gate FAILED ({} problem(s), {inconclusive} inconclusive row(s)):\n  - {}",
            problems.len(),
            problems.join("\n  - ")
        );
        ExitCode::from(exit::FAILED)
    }
}

/// Runs one row's scenario, with its history; a scenario that panics (a harness bound ran out,
/// a process would not start) proves nothing about its row, and says so, instead of ending the
/// whole gate.
async fn run_caught(id: &str, env: &GateEnv) -> (Judgement, Option<History>) {
    use futures_util::FutureExt;
    match std::panic::AssertUnwindSafe(rows::run(id, env))
        .catch_unwind()
        .await
    {
        Ok(ran) => (ran.judgement, Some(ran.history)),
        Err(panic) => {
            let said = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            let judgement = Judgement::new(
                RowOutcome::Inconclusive,
                format!("the scenario panicked: {}", gates::judge::one_line(&said)),
            );
            (judgement, None)
        }
    }
}

/// `reticle gate merge`: reads each part's scorecard, merges them and judges the whole.
fn merge(dirs: &[PathBuf], out: Option<PathBuf>) -> ExitCode {
    let mut parts = Vec::new();
    for dir in dirs {
        let file = dir.join("scorecard.json");
        let text = match std::fs::read_to_string(&file) {
            Ok(text) => text,
            Err(err) => {
                return usage(&format!(
                    "cannot read {} ({err}); give the --out folder of each part",
                    file.display()
                ));
            }
        };
        match read_part(&dir.display().to_string(), &text) {
            Ok(part) => parts.push(part),
            Err(sentence) => return usage(&sentence),
        }
    }
    let card = match parts::merge(parts, now()) {
        Ok(card) => card,
        Err(sentence) => {
            eprintln!("reticle gate merge: {sentence}");
            return ExitCode::from(exit::FAILED);
        }
    };
    let dir = report_dir(out, "gate-merged");
    if let Err(err) = std::fs::create_dir_all(&dir).and_then(|()| write_reports(&card, &dir)) {
        eprintln!(
            "reticle gate merge: could not write the reports in {}: {err}",
            dir.display()
        );
        return ExitCode::from(exit::FAILED);
    }
    println!("{}", card.table());
    verdict(&card, &card.problems())
}

fn analyze(dir: &Path) -> ExitCode {
    match gates::analyze::analyze(dir, now()) {
        Ok(card) => {
            println!("{}", card.table());
            verdict(&card, &card.problems())
        }
        Err(sentence) => usage(&sentence),
    }
}

/// Where this run's reports go.
fn report_dir(out: Option<PathBuf>, kind: &str) -> PathBuf {
    out.unwrap_or_else(|| {
        let stamp = now().replace([':', '.'], "-");
        PathBuf::from(".reticle/runs").join(format!("{kind}-{stamp}"))
    })
}

/// One row's history, one operation per line.
fn write_history(dir: &Path, id: &str, history: &History) -> std::io::Result<()> {
    let lines: String = history
        .ops()
        .iter()
        .map(|op| serde_json::to_string(op).unwrap_or_default() + "\n")
        .collect();
    std::fs::write(dir.join(format!("{id}.jsonl")), lines)
}

fn write_reports(card: &Scorecard, dir: &Path) -> std::io::Result<()> {
    std::fs::write(
        dir.join("scorecard.json"),
        serde_json::to_string_pretty(card).unwrap_or_default(),
    )?;
    std::fs::write(dir.join("scorecard.md"), card.markdown())?;
    std::fs::write(dir.join("junit.xml"), card.junit())?;
    eprintln!("reticle gate: reports in {}", dir.display());
    Ok(())
}

/// The `reticle` binary beside this one.
fn sibling_reticle() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
    let dir = exe.parent().ok_or("this binary has no directory")?;
    let reticle = dir.join("reticle");
    if reticle.is_file() {
        Ok(reticle)
    } else {
        Err(format!(
            "no `reticle` binary next to {}; build both with `cargo build --workspace --bins`",
            exe.display()
        ))
    }
}

fn now() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

fn usage(sentence: &str) -> ExitCode {
    eprintln!("reticle gate: {sentence}");
    ExitCode::from(exit::USAGE)
}
