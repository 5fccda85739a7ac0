//! `soak`: a long soak of one held-open agent link ([`gates::soak`]), shown as a progress line
//! per round and recorded as one JSON line of figures appended to `bench/soak-history.jsonl`.
//!
//! It measures and records; it must never retry a call. Exits 0 when the soak survived, 1 on a
//! lost, late or unanswered call, a link drop, a change of daemon, or a soak that never started.
//! Run: `cargo run --release -p gates --bin soak -- --rounds R --calls C --idle-ms G`

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use gates::judge::RowOutcome;
use gates::scenarios::GateEnv;
use gates::scorecard::exit;
use gates::soak::{self, Between, Plan};
use serde_json::json;

/// Soak one held-open `reticle mcp` link: rounds of calls, an idle gap between rounds.
///
/// The link runs through the gates' embedded fault proxy with no toxic (or the Toxiproxy server
/// `TOXIPROXY_URL` names), to a daemon this command owns, whose idle shutdown is set low so every
/// gap crosses it. Runs the `reticle` binary `RETICLE_BIN` names, else the one beside this one.
#[derive(Debug, Parser)]
#[command(name = "soak", version)]
struct Args {
    /// Rounds of calls.
    #[arg(long, default_value_t = 20)]
    rounds: usize,
    /// Calls per round (tools/call, tools/list and ping in turn, one after another).
    #[arg(long, default_value_t = 10)]
    calls: usize,
    /// The idle gap between rounds, in milliseconds.
    #[arg(long, default_value_t = 6000)]
    idle_ms: u64,
    /// The history file the result line is appended to.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../bench/soak-history.jsonl"))]
    history: PathBuf,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt.block_on(run(args)),
        Err(err) => {
            eprintln!("soak: cannot start the async runtime: {err}");
            ExitCode::from(exit::FAILED)
        }
    }
}

async fn run(args: Args) -> ExitCode {
    if args.rounds == 0 || args.calls == 0 {
        eprintln!("soak: --rounds and --calls must be at least 1");
        return ExitCode::from(exit::USAGE);
    }
    let swept = harness::marker::sweep_orphans();
    if !swept.is_empty() {
        eprintln!("soak: swept {} orphan(s) from an earlier run", swept.len());
    }
    let plan = Plan {
        rounds: args.rounds,
        calls: args.calls,
        idle: Duration::from_millis(args.idle_ms),
        between: Between::Nothing,
    };
    let straddled: Vec<&str> = plan.straddled().iter().map(|h| h.name).collect();
    eprintln!(
        "soak: {} rounds of {} calls, {} ms idle between rounds (outlasting: {})",
        plan.rounds,
        plan.calls,
        args.idle_ms,
        if straddled.is_empty() {
            "none of the idle bounds".to_string()
        } else {
            straddled.join(", ")
        }
    );
    let env = GateEnv {
        reticle: harness::binaries::reticle(),
    };
    let rounds = plan.rounds;
    let ran = soak::run(&env, plan, |record| {
        eprintln!("soak: {}", record.line(rounds))
    })
    .await;
    let judgement = ran.judgement();
    let s = &ran.summary;
    let line = json!({
        "date": now(),
        "commit": commit(),
        "cores": std::thread::available_parallelism().map_or(0, |n| n.get()),
        "profile": if cfg!(debug_assertions) { "debug" } else { "release" },
        "rounds": args.rounds,
        "callsPerRound": args.calls,
        "idleMs": args.idle_ms,
        "straddles": plan.straddled(),
        "calls": s.calls,
        "answered": s.answered,
        "ok": s.ok,
        "lost": s.lost,
        "otherErrors": s.other_errors,
        "unanswered": s.unanswered,
        "answerRate": s.answer_rate,
        "okRate": s.ok_rate,
        "linkDrops": s.link_drops,
        "instances": s.instances,
        "instanceChanges": s.instance_changes,
        "p50Ms": round3(s.p50_ms),
        "p99Ms": round3(s.p99_ms),
        "wallS": round3(s.wall_s),
        "outcome": judgement.outcome.word(),
    });
    println!("{}", judgement.evidence);
    match append(&args.history, &line.to_string()) {
        Ok(()) => eprintln!("soak: recorded in {}", args.history.display()),
        Err(err) => {
            eprintln!(
                "soak: could not append to {}: {err}",
                args.history.display()
            );
            return ExitCode::from(exit::FAILED);
        }
    }
    if judgement.outcome == RowOutcome::Survived {
        println!("soak passed: {}", judgement.outcome.word());
        ExitCode::from(exit::PASSED)
    } else {
        println!("soak FAILED: {}", judgement.outcome.word());
        ExitCode::from(exit::FAILED)
    }
}

fn append(path: &Path, line: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    writeln!(file, "{line}")
}

/// The checked-out commit, with `+dirty` when tracked files differ from it.
fn commit() -> String {
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let git = |args: &[&str]| gates::git::output(here, args);
    let head = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    match git(&["status", "--porcelain", "--untracked-files=no"]) {
        Some(changes) if changes.is_empty() => head,
        _ => format!("{head}+dirty"),
    }
}

fn now() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
