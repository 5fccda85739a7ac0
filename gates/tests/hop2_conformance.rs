//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, run on the Node 22 of
//! the npm package `node`, both installed in gates/conformance by the README's test command)
//! against one daemon's Streamable HTTP endpoint, three runs in a row on that one daemon (the
//! suite never DELETEs its sessions: a cap it filled would lock the next run out). Every
//! scenario that applies to a tools server with logging passes in each run; every other scenario
//! the suite runs is named below with why it does not apply, and one the suite adds that is in
//! neither list fails the test until it is judged. Control: the same judge on a stand-in that is
//! not an MCP server (it answers every request 404) finds the applicable scenarios failing.

use std::path::PathBuf;
use std::time::Duration;

use harness::OwnedDaemon;
use harness::fixture_app::repo_root;

/// Scenarios a Reticle daemon must pass: what it offers (tools, logging, ping, sessions, the
/// stream it declines, the Host check).
const APPLICABLE: &[&str] = &[
    "server-initialize",
    "server-session-lifecycle",
    "logging-set-level",
    "ping",
    "tools-list",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
];

const EVERYTHING_TOOLS: &str = "calls a tool of the suite's reference server (test_*), which a Reticle daemon does not have: its tools are its own (their progress and logging are tested by hop1_stress and the proxy's unit tests)";

/// Scenarios that test a capability Reticle does not offer, or tools only the suite's own
/// reference server has; each with why.
const NOT_APPLICABLE: &[(&str, &str)] = &[
    (
        "completion-complete",
        "completions: Reticle offers no prompts or resource templates to complete",
    ),
    ("tools-call-simple-text", EVERYTHING_TOOLS),
    ("tools-call-image", EVERYTHING_TOOLS),
    ("tools-call-audio", EVERYTHING_TOOLS),
    ("tools-call-embedded-resource", EVERYTHING_TOOLS),
    ("tools-call-mixed-content", EVERYTHING_TOOLS),
    ("tools-call-with-logging", EVERYTHING_TOOLS),
    ("tools-call-error", EVERYTHING_TOOLS),
    ("tools-call-with-progress", EVERYTHING_TOOLS),
    (
        "tools-call-sampling",
        "sampling: a Reticle tool never asks the client's model",
    ),
    (
        "tools-call-elicitation",
        "elicitation: a Reticle tool never asks the user",
    ),
    (
        "elicitation-sep1034-defaults",
        "elicitation: a Reticle tool never asks the user",
    ),
    (
        "elicitation-sep1330-enums",
        "elicitation: a Reticle tool never asks the user",
    ),
    ("resources-list", "resources: Reticle offers none"),
    ("resources-read-text", "resources: Reticle offers none"),
    ("resources-read-binary", "resources: Reticle offers none"),
    ("resources-templates-read", "resources: Reticle offers none"),
    ("resources-subscribe", "resources: Reticle offers none"),
    ("resources-unsubscribe", "resources: Reticle offers none"),
    ("prompts-list", "prompts: Reticle offers none"),
    ("prompts-get-simple", "prompts: Reticle offers none"),
    ("prompts-get-with-args", "prompts: Reticle offers none"),
    (
        "prompts-get-embedded-resource",
        "prompts: Reticle offers none",
    ),
    ("prompts-get-with-image", "prompts: Reticle offers none"),
];

/// One run's bound: the whole suite takes about half a minute.
const RUN_BOUND: Duration = Duration::from_secs(300);

fn suite_dir() -> PathBuf {
    repo_root().join("gates/conformance/node_modules")
}

/// One scenario's line of the suite's summary: `✓ name: 3 passed, 0 failed`.
#[derive(Debug, Clone, PartialEq)]
struct Scenario {
    name: String,
    passed: u32,
    failed: u32,
}

fn summary(stdout: &str) -> Vec<Scenario> {
    let after = stdout.split("=== SUMMARY ===").nth(1).unwrap_or("");
    after
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let line = line
                .strip_prefix('✓')
                .or_else(|| line.strip_prefix('✗'))?
                .trim();
            let (name, counts) = line.split_once(": ")?;
            let mut numbers = counts
                .split(|c: char| !c.is_ascii_digit())
                .filter(|s| !s.is_empty());
            let passed = numbers.next()?.parse().ok()?;
            let failed = numbers.next()?.parse().ok()?;
            Some(Scenario {
                name: name.to_string(),
                passed,
                failed,
            })
        })
        .collect()
}

/// Runs the suite's server scenarios against `url`: its summary.
async fn run_suite(url: &str) -> Vec<Scenario> {
    let node = suite_dir().join("node/bin/node");
    let cli = suite_dir().join("@modelcontextprotocol/conformance/dist/index.js");
    assert!(
        node.exists() && cli.exists(),
        "the conformance suite is not installed under {}: run the README's test command (scripts/test.sh), which installs it",
        suite_dir().display()
    );
    let work = tempfile::tempdir().unwrap();
    let run = tokio::process::Command::new(node)
        .arg(cli)
        .args(["server", "--url", url])
        .current_dir(work.path())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(RUN_BOUND, run)
        .await
        .expect("the suite ends within its bound")
        .expect("the suite starts");
    summary(&String::from_utf8_lossy(&output.stdout))
}

/// The judge: every applicable scenario ran and passed everything it checked; every other one
/// is known not to apply. The failures, or `Ok`.
fn judge(scenarios: &[Scenario]) -> Result<(), Vec<String>> {
    let mut wrong = Vec::new();
    for name in APPLICABLE {
        match scenarios.iter().find(|s| s.name == *name) {
            None => wrong.push(format!("{name}: not run (zero observations is no pass)")),
            Some(s) if s.failed > 0 || s.passed == 0 => {
                wrong.push(format!("{name}: {} passed, {} failed", s.passed, s.failed))
            }
            Some(_) => {}
        }
    }
    for s in scenarios {
        let known = APPLICABLE.contains(&s.name.as_str())
            || NOT_APPLICABLE.iter().any(|(name, _)| *name == s.name);
        if !known {
            wrong.push(format!(
                "{}: a scenario this test has not judged applicable or not",
                s.name
            ));
        }
    }
    if wrong.is_empty() { Ok(()) } else { Err(wrong) }
}

#[tokio::test]
async fn the_official_conformance_suite_passes_every_applicable_scenario_three_runs_in_a_row() {
    let daemon = OwnedDaemon::start().await;
    let url = format!("http://127.0.0.1:{}/mcp", daemon.port());
    for run in 1..=3 {
        let scenarios = run_suite(&url).await;
        if let Err(wrong) = judge(&scenarios) {
            panic!("run {run} of 3: {wrong:#?}\nsummary: {scenarios:#?}");
        }
    }
}

/// Control: a stand-in that is no MCP server (every request answered 404) fails the judge.
#[tokio::test]
async fn a_stand_in_that_is_no_mcp_server_fails_the_judge() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let stand_in = tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buffer = vec![0u8; 64 * 1024];
                let _ = socket.read(&mut buffer).await;
                let _ = socket
                    .write_all(
                        b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                    )
                    .await;
            });
        }
    });
    let scenarios = run_suite(&format!("http://127.0.0.1:{port}/mcp")).await;
    let wrong = judge(&scenarios).expect_err("a stand-in that is no server is not conformant");
    assert!(
        wrong.iter().any(|w| w.starts_with("server-initialize")),
        "{wrong:#?}"
    );
    stand_in.abort();
}

#[test]
fn the_summary_is_read_line_by_line() {
    let out = "noise\n=== SUMMARY ===\n✓ ping: 2 passed, 0 failed\n✗ tools-list: 1 passed, 2 failed\n\nTotal: 3 passed, 2 failed\n";
    assert_eq!(
        summary(out),
        [
            Scenario {
                name: "ping".into(),
                passed: 2,
                failed: 0
            },
            Scenario {
                name: "tools-list".into(),
                passed: 1,
                failed: 2
            },
        ]
    );
    assert!(judge(&summary(out)).is_err());
}
