//! `reticle gate` (reached as `reticle gate` through the CLI's subcommand dispatch): runs every
//! inventory row's scenario against the real system, the negative controls, and prints the
//! scorecard; writes JSON, Markdown and JUnit XML, and each row's history as it finishes (so a
//! run cut short keeps what it did); exits non-zero on any silent row, any row below
//! its target, any regression against the baseline, or any control that was not scored silent.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use gates::history::History;
use gates::inventory::{INVENTORY, Row};
use gates::judge::{Judgement, RowOutcome};
use gates::scenarios::{self, GateEnv};
use gates::scorecard::{Score, Scorecard, exit, parse_baseline};

/// Score every row of the fragility inventory against the real system.
///
/// Builds nothing: it runs the `reticle` binary that sits next to it. Each row's scenario starts
/// its own daemon on a free loopback port with a private state dir, injects its fault, records a
/// history and judges it: survived, surfaced, silent or inconclusive (never a pass).
#[derive(Debug, Parser)]
#[command(name = "reticle gate", bin_name = "reticle gate", version)]
struct Args {
    /// Only these rows, comma-separated (e.g. H3.1,H3.6).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Run TCP faults through this Toxiproxy server instead of the embedded fault proxy.
    #[arg(long)]
    toxiproxy: Option<String>,
    /// Where to write scorecard.json, scorecard.md, junit.xml and histories/<row>.jsonl (every
    /// operation each row's scenario performed, one JSON object per line)
    /// (default .reticle/runs/gate-<timestamp>/).
    #[arg(long)]
    out: Option<PathBuf>,
    /// The committed baseline to compare against.
    #[arg(long, default_value = "gates/baseline.json")]
    baseline: PathBuf,
    /// Write this run's outcomes to the baseline file instead of comparing (after a reviewed
    /// improvement).
    #[arg(long)]
    update_baseline: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt.block_on(gate(args)),
        Err(err) => {
            eprintln!("reticle gate: cannot start the async runtime: {err}");
            ExitCode::from(exit::FAILED)
        }
    }
}

async fn gate(args: Args) -> ExitCode {
    let reticle = match sibling_reticle() {
        Ok(path) => path,
        Err(sentence) => return usage(&sentence),
    };
    // SAFETY: set before any thread reads the environment.
    unsafe { std::env::set_var("RETICLE_BIN", &reticle) };
    if let Some(url) = &args.toxiproxy {
        // SAFETY: as above; the nemesis reads it when a scenario starts.
        unsafe { std::env::set_var(gates::nemesis::TOXIPROXY_URL, url) };
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
                eprintln!(
                    "reticle gate: no baseline at {} ({err}); comparing against nothing",
                    args.baseline.display()
                );
                BTreeMap::new()
            }
        }
    };
    let dir = report_dir(args.out.clone());
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
    let rows: Vec<&Row> = INVENTORY
        .iter()
        .filter(|r| args.only.is_empty() || args.only.iter().any(|id| id == r.id))
        .collect();
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
    eprintln!("reticle gate: running the negative controls");
    let card = Scorecard {
        generated_at: now(),
        rows: scores,
        controls: gates::controls::all().await,
    };
    println!("{}", card.table());
    if let Err(err) = write_reports(&card, &dir) {
        eprintln!("reticle gate: could not write the reports: {err}");
        return ExitCode::from(exit::FAILED);
    }
    if args.update_baseline {
        let body = serde_json::to_string_pretty(&card.as_baseline()).unwrap_or_default();
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
    let problems = card.problems();
    let inconclusive = card
        .rows
        .iter()
        .filter(|s| s.outcome == RowOutcome::Inconclusive)
        .count();
    if problems.is_empty() {
        println!(
            "gate passed: {} row(s), every control went red",
            card.rows.len()
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
    match std::panic::AssertUnwindSafe(scenarios::run(id, env))
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

/// Where this run's reports go.
fn report_dir(out: Option<PathBuf>) -> PathBuf {
    out.unwrap_or_else(|| {
        let stamp = now().replace([':', '.'], "-");
        PathBuf::from(".reticle/runs").join(format!("gate-{stamp}"))
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
