//! `reticle verify <url>` as CI runs it, on real parts: the fixture app, a daemon serving a
//! private project, flows saved through the tool layer by an agent, and the Chromium verify
//! launches itself. All green exits 0 with a JUnit testcase per flow; the broken build
//! (`stuckCounter=1`) exits 1 naming the flow and step; a page without the SDK exits 2 within
//! the bound naming the cause (and a wrong token is told apart from it); a missing or killed
//! Chromium exits 2, never 0 (V1, with its stand-in control); `--changed` runs the flows whose
//! `paths` match a changed file and says which it skipped (control: a change no flow declares
//! runs nothing and says so).

mod common;
mod support;

use std::path::{Path, PathBuf};

use common::row_meets_target;
use gates::judge::RowOutcome;
use gates::scenarios::verify_cli::{VerifyRig, browser_death_is_never_green, click_flow};
use gates::scenarios::{GateEnv, Ran};
use harness::binaries;
use serde_json::{Value, json};

fn reticle() -> PathBuf {
    binaries::reticle()
}

async fn rig_with_flows(flows: &[Value]) -> VerifyRig {
    let rig = VerifyRig::start().await.expect("the rig starts");
    for flow in flows {
        rig.save(flow.clone()).await.expect("the flow is saved");
    }
    rig
}

fn count() -> Value {
    click_flow("count", "counter-increment", "counter.changed", 8000)
}

fn ping() -> Value {
    click_flow("ping", "send-signal", "fixture.ping", 8000)
}

fn with_paths(mut flow: Value, paths: &[&str]) -> Value {
    flow["paths"] = json!(paths);
    flow
}

fn run_files(project: &Path) -> Vec<Value> {
    let dir = project.join(".reticle/runs");
    std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|e| std::fs::read_to_string(e.path()).ok())
                .filter_map(|t| serde_json::from_str(&t).ok())
                .collect()
        })
        .unwrap_or_default()
}

/// The testcase elements of a well-formed JUnit report.
fn testcases(xml: &str) -> usize {
    support::xml::elements(xml)
        .unwrap_or_else(|e| panic!("not well formed ({e}): {xml}"))
        .iter()
        .filter(|e| e.name == "testcase")
        .count()
}

fn said(ran: &harness::cli::Ran) -> String {
    ran.said()
}

#[tokio::test]
async fn a_green_suite_exits_0_with_a_junit_testcase_per_flow_and_a_run_artifact() {
    let rig = rig_with_flows(&[count(), ping()]).await;
    let junit = rig.project.path().join("report.xml");
    let markdown = rig.project.path().join("report.md");
    let json_out = rig.project.path().join("report.json");
    let junit_arg = junit.to_string_lossy().to_string();
    let markdown_arg = markdown.to_string_lossy().to_string();
    let json_arg = json_out.to_string_lossy().to_string();
    let ran = rig
        .verify(
            &reticle(),
            &rig.url(""),
            &[
                "--jobs",
                "2",
                "--junit",
                &junit_arg,
                "--markdown",
                &markdown_arg,
                "--json",
                &json_arg,
            ],
        )
        .await;
    assert_eq!(ran.code, Some(0), "{}", said(&ran));
    // A progress line per flow (plain: not a terminal), then the table.
    assert!(ran.stdout.contains("/2] count: yes"), "{}", ran.stdout);
    assert!(ran.stdout.contains("/2] ping: yes"), "{}", ran.stdout);
    assert!(
        ran.stdout.contains("flow   verdict  failing step  time"),
        "{}",
        ran.stdout
    );

    let xml = std::fs::read_to_string(&junit).expect("the JUnit file is written");
    assert_eq!(testcases(&xml), 2, "{xml}");
    assert!(
        !xml.contains("<failure") && !xml.contains("<error"),
        "{xml}"
    );
    let md = std::fs::read_to_string(&markdown).unwrap();
    assert!(md.contains("| count | yes | - |"), "{md}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json_out).unwrap()).unwrap();
    assert_eq!(doc["verified"], "yes", "{doc}");
    assert_eq!(doc["kind"], "verify", "{doc}");

    // The suite's run artifact, beside each flow's own replay run.
    let runs = run_files(rig.project.path());
    let suite: Vec<&Value> = runs.iter().filter(|r| r["kind"] == "verify").collect();
    assert_eq!(suite.len(), 1, "{runs:?}");
    assert_eq!(suite[0]["flows"].as_array().unwrap().len(), 2, "{runs:?}");
    // Each flow ran on a session of its own.
    let sessions: Vec<&Value> = runs.iter().filter(|r| r["kind"] == "flow_replay").collect();
    assert_eq!(sessions.len(), 2, "{runs:?}");
}

#[tokio::test]
async fn a_broken_build_exits_1_naming_the_flow_and_the_step() {
    let rig = rig_with_flows(&[ping(), count()]).await;
    let junit = rig.project.path().join("report.xml");
    let junit_arg = junit.to_string_lossy().to_string();
    let ran = rig
        .verify(
            &reticle(),
            &rig.url("&stuckCounter=1"),
            &["--junit", &junit_arg, "--flows", "count,ping"],
        )
        .await;
    assert_eq!(ran.code, Some(1), "{}", said(&ran));
    assert!(
        ran.stderr.contains("count is no at step 1"),
        "{}",
        said(&ran)
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(testcases(&xml), 2, "{xml}");
    assert!(xml.contains("<failure message=\"step 1:"), "{xml}");
}

#[tokio::test]
async fn a_page_without_the_sdk_exits_2_within_the_bound_naming_the_cause() {
    let rig = rig_with_flows(&[count()]).await;
    rig.app.page(
        "/plain.html",
        "<!doctype html><title>plain</title><p>no SDK here</p>",
    );
    let ran = rig
        .verify(
            &reticle(),
            &rig.app.url("/plain.html"),
            &["--timeout-ms", "3000"],
        )
        .await;
    assert_eq!(ran.code, Some(2), "{}", said(&ran));
    assert!(
        ran.stderr.contains("does not load the Reticle SDK"),
        "{}",
        said(&ran)
    );
    assert!(
        ran.stderr.contains("reticle status --port"),
        "{}",
        said(&ran)
    );

    // Told apart: the SDK is there but its token is wrong, and the daemon saw it refused.
    let wrong_token = rig.app.url(&format!(
        "/?reticlePort={}&reticleToken=nope",
        rig.daemon.port()
    ));
    let ran = rig
        .verify(&reticle(), &wrong_token, &["--timeout-ms", "3000"])
        .await;
    assert_eq!(ran.code, Some(2), "{}", said(&ran));
    assert!(ran.stderr.contains("the token differs"), "{}", said(&ran));
}

#[tokio::test]
async fn a_missing_chromium_exits_2_and_a_usage_error_3() {
    let rig = rig_with_flows(&[count()]).await;
    let mut command = rig.command(&reticle(), &rig.url(""), &[]);
    command.env("RETICLE_CHROMIUM", "/nonexistent/chromium");
    let ran = harness::cli::run_command(command).await;
    assert_eq!(ran.code, Some(2), "{}", said(&ran));
    assert!(
        ran.stderr.contains("/nonexistent/chromium"),
        "{}",
        said(&ran)
    );

    let ran = rig
        .verify(&reticle(), &rig.url(""), &["--jobs", "zero"])
        .await;
    assert_eq!(ran.code, Some(3), "{}", said(&ran));
    let ran = rig.verify(&reticle(), "not-a-url", &[]).await;
    assert_eq!(ran.code, Some(3), "{}", said(&ran));
}

#[tokio::test]
async fn a_killed_chromium_is_never_green_and_a_stand_in_that_says_0_scores_silent() {
    let env = GateEnv { reticle: reticle() };
    let Ran { judgement, history } = browser_death_is_never_green(&env).await;
    assert_eq!(
        judgement.outcome,
        RowOutcome::Surfaced,
        "{judgement:?} {:#?}",
        history.ops()
    );

    // Negative control: a verify that reports 0 whatever happened (the gate's own stand-in).
    let control = gates::controls::stand_in_verify_exits_0(&reticle()).await;
    assert_eq!(control.outcome, RowOutcome::Silent, "{control:?}");
}

/// V1 as the gate scores it: at its target and its baseline.
#[tokio::test]
async fn v1_a_killed_chromium_meets_its_target() {
    row_meets_target("V1").await;
}

#[tokio::test]
async fn changed_runs_the_flows_whose_paths_match_and_says_which_it_skipped() {
    let rig = rig_with_flows(&[
        with_paths(count(), &["src/counter/**"]),
        with_paths(ping(), &["src/ping/*.js"]),
        click_flow("details", "nav-details", "route.rendered", 8000),
    ])
    .await;
    let repo = rig.project.path();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(repo)
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    for file in ["src/counter/view.js", "src/ping/ping.js", "docs/readme.md"] {
        let path = repo.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "v1\n").unwrap();
    }
    git(&["init", "-q"]);
    git(&["add", "src", "docs"]);
    git(&["commit", "-q", "-m", "base"]);
    std::fs::write(repo.join("src/counter/view.js"), "v2\n").unwrap();

    let ran = rig
        .verify(&reticle(), &rig.url(""), &["--changed", "HEAD"])
        .await;
    assert_eq!(ran.code, Some(0), "{}", said(&ran));
    assert!(
        ran.stdout
            .contains("skipped ping: none of its paths (src/ping/*.js) matches a changed file"),
        "{}",
        ran.stdout
    );
    assert!(ran.stdout.contains("count: yes"), "{}", ran.stdout);
    assert!(ran.stdout.contains("details: yes"), "{}", ran.stdout);
    assert!(!ran.stdout.contains("ping: yes"), "{}", ran.stdout);

    // Control: a change no flow declares runs nothing, says so, and is not a pass.
    git(&["checkout", "-q", "--", "src"]);
    std::fs::write(repo.join("docs/readme.md"), "v2\n").unwrap();
    let ran = rig
        .verify(
            &reticle(),
            &rig.url(""),
            &["--changed", "HEAD", "--flows", "count,ping"],
        )
        .await;
    assert_eq!(ran.code, Some(2), "{}", said(&ran));
    assert!(ran.stdout.contains("skipped count"), "{}", ran.stdout);
    assert!(ran.stdout.contains("skipped ping"), "{}", ran.stdout);
    assert!(
        ran.stderr
            .contains("no flow covers the 1 file(s) changed since HEAD"),
        "{}",
        said(&ran)
    );
}
