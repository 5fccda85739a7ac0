//! `reticle verify <url>` as CI runs it, on real parts: the fixture app, a daemon serving a
//! private project, flows saved through the tool layer by an agent, and the Chromium verify
//! launches itself. All green exits 0 with a JUnit testcase per flow; the broken build
//! (`stuckCounter=1`) exits 1 naming the flow and step; a page without the SDK exits 2 within
//! the bound naming the cause (and a wrong token is told apart from it); a missing or killed
//! Chromium exits 2, never 0 (V1, with its stand-in control); `--changed` runs the flows whose
//! `paths` match a changed file and says which it skipped (control: a change no flow declares
//! runs nothing and says so). Leases: a person's tab their agent leased, under the very session
//! id verify chose, is never driven (control: a verify that takes no lease on a daemon that
//! ignores leases drives it); each session verify drives is leased by its job while the flow
//! replays and let go after (control: a verify that takes no lease is caught). Verify opens
//! each flow's page at its start path and the replay uses it as opened, with no second load
//! (control: a page said to be fresh but elsewhere is still navigated).

mod common;
mod support;

use std::path::{Path, PathBuf};

use common::row_meets_target;
use gates::judge::RowOutcome;
use gates::rows::verify::v1_browser_death_is_never_green::browser_death_is_never_green;
use gates::scenarios::verify_rig::{BOUND, VerifyRig, click_flow};
use gates::scenarios::{GateEnv, Ran};
use harness::binaries;
use reticle::config::env;
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

/// A flow that passes only in storage no earlier flow touched: `/storage.html` signals
/// `storage.fresh` when its origin's localStorage did not hold its mark before it loaded.
fn fresh_storage(name: &str) -> Value {
    let mut flow = click_flow(name, "storage-check", "storage.fresh", 2000);
    flow["startPath"] = json!("/storage.html");
    flow
}

#[tokio::test]
async fn each_flow_runs_in_storage_no_other_flow_touched() {
    let flows = [
        fresh_storage("fresh-a"),
        fresh_storage("fresh-b"),
        fresh_storage("fresh-c"),
    ];
    let rig = rig_with_flows(&flows).await;
    let url = rig.url("");
    let isolated = rig.verify(&reticle(), &url, &["--jobs", "1"]).await;
    assert_eq!(isolated.code, Some(0), "{}", isolated.said());

    // Negative control: a verify that opens later flows in the first flow's context shows them
    // its storage, and they fail.
    let shared = rig
        .verify_with(
            &reticle(),
            &url,
            &["--jobs", "1"],
            &[(env::TEST_STAND_IN_VERIFY_SHARES_CONTEXT, "1")],
        )
        .await;
    assert_eq!(
        shared.code,
        Some(1),
        "flows sharing a context saw fresh storage: {}",
        shared.said()
    );
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
async fn verify_opens_each_flow_at_its_start_path_and_the_replay_does_not_load_it_again() {
    let mut elsewhere = click_flow("elsewhere", "counter-increment", "counter.changed", 8000);
    elsewhere["startPath"] = json!("/index.html");
    let rig = rig_with_flows(&[count(), elsewhere]).await;
    let ran = rig.verify(&reticle(), &rig.url(""), &[]).await;
    assert_eq!(ran.code, Some(0), "{}", said(&ran));
    let runs = run_files(rig.project.path());
    let replays: Vec<&Value> = runs.iter().filter(|r| r["kind"] == "flow_replay").collect();
    assert_eq!(replays.len(), 2, "{runs:?}");
    for replay in replays {
        let flow = &replay["flows"][0];
        assert_eq!(flow["startedBy"], "as_opened", "no reload: {replay}");
        assert_eq!(flow["verified"], "yes", "{replay}");
    }

    // Control: the page's route is checked, not trusted. A page at `/` said to be fresh for a
    // flow that starts at `/index.html` is navigated there.
    let session = "fresh-but-elsewhere";
    let browser = harness::Browser::launch().await.expect("chromium starts");
    let tab = browser
        .open(&format!("{}&__reticle_session={session}", rig.url("")))
        .await
        .expect("the tab opens");
    rig.await_session("the tab connected", session).await;
    let answer = rig
        .run_tool(
            "reticle_flow_replay",
            json!({"name": "elsewhere", "sessionId": session, "freshAtStart": true,
                   "arrivalTimeoutMs": 2000}),
        )
        .await
        .expect("reticle_flow_replay answers");
    assert_eq!(
        answer["structuredContent"]["startedBy"], "navigation",
        "{answer}"
    );
    let path: String = tab
        .eval("location.pathname")
        .await
        .expect("the tab answers");
    assert_eq!(path, "/index.html");
    browser.close().await;
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
        ran.stderr.contains("count is no: step 1 of"),
        "{}",
        said(&ran)
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(testcases(&xml), 2, "{xml}");
    assert!(xml.contains("<failure message=\"step 1 of"), "{xml}");
    assert!(!ran.stderr.contains("step 1: step 1"), "{}", said(&ran));
}

/// Nothing listening at the URL is named as that ("connection refused at URL"), not blamed on the
/// SDK, and no browser starts for it (the Chromium named does not exist, so a run that went on
/// would say so). Control: the same URL with the app listening gets as far as the browser.
#[tokio::test]
async fn nothing_listening_at_the_url_is_named_as_refused_before_any_browser() {
    let rig = rig_with_flows(&[count()]).await;
    let closed = harness::ports::free_port();
    let url = format!("http://127.0.0.1:{closed}/");
    let mut command = rig.command(&reticle(), &url, &["--timeout-ms", "300"]);
    command.env("RETICLE_CHROMIUM", "/nonexistent/chromium");
    let ran = harness::cli::run_command(command).await;
    assert_eq!(ran.code, Some(2), "{}", said(&ran));
    assert!(
        ran.stderr.contains(&format!("connection refused at {url}")),
        "{}",
        said(&ran)
    );
    assert!(!ran.stderr.contains("SDK"), "{}", said(&ran));
    assert!(
        !ran.stderr.contains("/nonexistent/chromium"),
        "{}",
        said(&ran)
    );

    let listening = tokio::net::TcpListener::bind(("127.0.0.1", closed))
        .await
        .unwrap();
    let mut command = rig.command(&reticle(), &url, &["--timeout-ms", "300"]);
    command.env("RETICLE_CHROMIUM", "/nonexistent/chromium");
    let ran = harness::cli::run_command(command).await;
    drop(listening);
    assert_eq!(ran.code, Some(2), "{}", said(&ran));
    assert!(
        ran.stderr.contains("/nonexistent/chromium"),
        "{}",
        said(&ran)
    );
}

/// A `--flows` name no saved flow has is a usage error naming the saved flows, before any
/// browser starts.
#[tokio::test]
async fn a_misspelt_flow_name_is_refused_naming_the_saved_flows_before_any_browser() {
    let rig = rig_with_flows(&[count(), ping()]).await;
    let mut command = rig.command(&reticle(), &rig.url(""), &["--flows", "count,pnig"]);
    command.env("RETICLE_CHROMIUM", "/nonexistent/chromium");
    let ran = harness::cli::run_command(command).await;
    assert_eq!(ran.code, Some(3), "{}", said(&ran));
    assert!(ran.stderr.contains("'pnig'"), "{}", said(&ran));
    assert!(
        ran.stderr.contains("the saved flows are count, ping"),
        "{}",
        said(&ran)
    );
    assert!(
        !ran.stderr.contains("/nonexistent/chromium"),
        "{}",
        said(&ran)
    );
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

/// Arguments that cannot be right are refused with 3 before any browser starts (the Chromium
/// named does not exist, so a run that went on would end 2 instead): an empty flow name, a
/// `--changed` value git would read as an option (`--output=FILE` would write FILE), and a report
/// file that is a directory or whose folder does not exist.
#[tokio::test]
async fn an_empty_flow_name_or_an_option_as_a_revision_is_refused_before_any_browser() {
    let rig = rig_with_flows(&[count()]).await;
    let written = tempfile::tempdir().unwrap();
    let target = written.path().join("written-by-git");
    let injected = format!("--changed=--output={}", target.display());
    let folder = written.path().to_string_lossy().into_owned();
    let nowhere = written.path().join("missing/report.md");
    let nowhere = nowhere.to_string_lossy().into_owned();
    for args in [
        vec!["--flows", ""],
        vec!["--flows", ",,"],
        vec!["--flows", "count,,"],
        vec![injected.as_str()],
        vec!["--junit", folder.as_str()],
        vec!["--markdown", nowhere.as_str()],
    ] {
        let mut command = rig.command(&reticle(), &rig.url(""), &args);
        command.env("RETICLE_CHROMIUM", "/nonexistent/chromium");
        let ran = harness::cli::run_command(command).await;
        assert_eq!(ran.code, Some(3), "{args:?}: {}", said(&ran));
        assert!(
            !ran.stderr.contains("/nonexistent/chromium"),
            "{}",
            said(&ran)
        );
        assert!(
            !target.exists(),
            "{args:?} made git write {}",
            target.display()
        );
    }
    // Control: a real name gets as far as the browser.
    let mut command = rig.command(&reticle(), &rig.url(""), &["--flows", "count"]);
    command.env("RETICLE_CHROMIUM", "/nonexistent/chromium");
    let ran = harness::cli::run_command(command).await;
    assert_eq!(ran.code, Some(2), "{}", said(&ran));
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

/// The door verify's browser is sent to: it holds every page request (the first carries the
/// session id verify chose for its first flow) unanswered until the test lets them in, then
/// answers a plain page, so the test knows that id before any page connects under it, and
/// verify (whose tab is still loading) waits meanwhile.
struct Door {
    port: u16,
    knocks: tokio::sync::mpsc::UnboundedReceiver<String>,
    open: tokio::sync::watch::Sender<bool>,
    _listener: tokio::task::JoinHandle<()>,
}

impl Door {
    async fn new() -> Self {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let port = harness::ports::free_port();
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .expect("the door binds");
        let (tx, knocks) = tokio::sync::mpsc::unbounded_channel();
        let (open, opened) = tokio::sync::watch::channel(false);
        let listener = tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let tx = tx.clone();
                let mut opened = opened.clone();
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut buf = [0u8; 4096];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    let head = String::from_utf8_lossy(&head).into_owned();
                    if let Some(target) = head.lines().next().and_then(|l| l.split(' ').nth(1)) {
                        let _ = tx.send(target.to_string());
                    }
                    if opened.wait_for(|open| *open).await.is_ok() {
                        let page = "<!doctype html><title>door</title>";
                        let answer = format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
                            page.len()
                        );
                        let _ = stream.write_all(answer.as_bytes()).await;
                    }
                });
            }
        });
        Self {
            port,
            knocks,
            open,
            _listener: listener,
        }
    }

    fn url(&self, path_and_query: &str) -> String {
        format!("http://127.0.0.1:{}{path_and_query}", self.port)
    }

    /// The path and query of the first page request naming a session, and that session id.
    async fn knock(&mut self) -> (String, String) {
        loop {
            let target = tokio::time::timeout(BOUND, self.knocks.recv())
                .await
                .ok()
                .flatten()
                .expect("verify's browser came to the door");
            let session = target
                .split(['?', '&'])
                .find_map(|p| p.strip_prefix("__reticle_session="));
            if let Some(session) = session {
                return (target.clone(), session.to_string());
            }
        }
    }

    /// Answers every request held, and every later one.
    fn let_in(&self) {
        self.open.send_replace(true);
    }
}

/// What a person's tab went through while verify ran.
struct PersonsTab {
    ran: harness::cli::Ran,
    /// The agent that leased it.
    holder: String,
    /// Its counter after verify ran (it starts at `Count: 0`).
    counter: String,
}

/// A person's tab (the fixture app in the test's own Chromium) that their agent (the rig's) has
/// leased, under the very session id verify chose for its first flow: verify's page request is
/// held at the door while the tab connects and is leased, then answered with a page without
/// the SDK. Verify thus finds that session connected, and leased by someone else.
async fn verify_meets_a_leased_tab(rig: &VerifyRig, verify_env: &[(&str, &str)]) -> PersonsTab {
    let mut door = Door::new().await;
    let path = format!(
        "/?reticlePort={}&reticleToken={}",
        rig.daemon.port(),
        rig.daemon.token()
    );
    let url = door.url(&path);
    let bin = reticle();
    let args = ["--timeout-ms", "30000"];
    let verify = rig.verify_with(&bin, &url, &args, verify_env);
    let person = async {
        let (target, session) = door.knock().await;
        let browser = harness::Browser::launch().await.expect("chromium starts");
        let tab = browser
            .open(&rig.app.url(&target))
            .await
            .expect("the tab opens");
        rig.await_session("the person's tab connected", &session)
            .await;
        let leased = rig
            .run_tool(
                "reticle_lease",
                json!({"action": "acquire", "sessionId": session}),
            )
            .await
            .expect("reticle_lease answers");
        let holder = leased["structuredContent"]["lease"]["holder"]["agent"]
            .as_str()
            .unwrap_or_else(|| panic!("the person's agent leased the tab: {leased}"))
            .to_string();
        door.let_in();
        (browser, tab, holder)
    };
    let (ran, (browser, tab, holder)) = tokio::join!(verify, person);
    let counter: String = tab
        .eval("document.querySelector('[data-testid=counter-value]').textContent")
        .await
        .expect("the tab answers");
    browser.close().await;
    PersonsTab {
        ran,
        holder,
        counter,
    }
}

/// The person's tab was left alone: verify did not drive it (its counter is untouched), said
/// which agent holds it, and did not pass.
fn verify_left_the_tab_alone(tab: &PersonsTab) -> Result<(), String> {
    let said = tab.ran.said();
    if tab.counter != "Count: 0" {
        return Err(format!(
            "verify drove a tab leased by another agent (its counter reads {}): {said}",
            tab.counter
        ));
    }
    if tab.ran.code != Some(2) || !said.contains(&format!("leased by agent {}", tab.holder)) {
        return Err(format!(
            "verify did not exit 2 naming the lease's holder {} (exit {:?}): {said}",
            tab.holder, tab.ran.code
        ));
    }
    Ok(())
}

#[tokio::test]
async fn verify_never_drives_a_session_another_agent_leased() {
    let rig = rig_with_flows(&[count()]).await;
    let tab = verify_meets_a_leased_tab(&rig, &[]).await;
    verify_left_the_tab_alone(&tab).unwrap_or_else(|why| panic!("{why}"));

    // Negative control: a verify that takes no lease, on a daemon that ignores leases, drives
    // the person's tab, and the check goes red.
    let rig = VerifyRig::start_with(&[(env::TEST_STAND_IN_IGNORE_LEASES, "1")])
        .await
        .expect("the rig starts");
    rig.save(count()).await.expect("the flow is saved");
    let tab =
        verify_meets_a_leased_tab(&rig, &[(env::TEST_STAND_IN_VERIFY_SKIPS_LEASES, "1")]).await;
    assert!(
        verify_left_the_tab_alone(&tab).is_err(),
        "the control drove nothing: {}",
        tab.ran.said()
    );
}

/// The session of verify's first flow and the agent that has leased it, if it is leased now.
async fn first_flow_lease(rig: &VerifyRig) -> Option<(String, String)> {
    let listed = rig
        .agent
        .call_tool("reticle_sessions", json!({}))
        .await
        .ok()?;
    let sessions = listed["structuredContent"]["sessions"].as_array()?.clone();
    let first = sessions.iter().find(|s| {
        s["sessionId"]
            .as_str()
            .is_some_and(|id| id.ends_with("-j1-f1"))
    })?;
    Some((
        first["sessionId"].as_str()?.to_string(),
        first["lease"]["holder"]["agent"].as_str()?.to_string(),
    ))
}

/// Verify runs a flow whose step waits long on the page: while it replays, its session is
/// leased by the job's own agent (`verify-...`), and another agent's act on it is refused naming
/// that agent; when the flow is done the job let its lease go (the lease book's answer, in the
/// run's JSON). Why not, when it is not so.
async fn verify_holds_and_releases_its_lease(
    rig: &VerifyRig,
    verify_env: &[(&str, &str)],
) -> Result<(), String> {
    let json_out = rig.project.path().join("leases.json");
    let json_arg = json_out.to_string_lossy().to_string();
    let url = rig.url("");
    let bin = reticle();
    let args = ["--json", json_arg.as_str()];
    let verify = rig.verify_with(&bin, &url, &args, verify_env);
    let watch = async {
        // Until the lease shows, or verify is done (its JSON is written last).
        let seen = harness::poll::within(BOUND, async || match first_flow_lease(rig).await {
            Some(found) => Some(Some(found)),
            None => json_out.exists().then_some(None),
        })
        .await
        .flatten();
        match seen {
            Some((session, holder)) if holder.starts_with("verify-") => {
                let act = rig
                    .agent
                    .call_tool(
                        "reticle_run",
                        json!({"tool": "reticle_act", "args": {
                        "sessionId": session,
                        "target": {"testid": "counter-increment"}, "action": "click"}}),
                    )
                    .await
                    .map_err(|e| format!("reticle_act: {e:?}"));
                act.and_then(|act| {
                    gates::rows::security::s12_leases::refusal_names_the_holder(&act, &holder)
                })
                .map(|()| (session, holder))
            }
            Some((session, holder)) => Err(format!(
                "session {session} is leased by {holder}, not by a verify job"
            )),
            None => Err("verify replayed its flow on a session it never leased".to_string()),
        }
    };
    let (ran, held) = tokio::join!(verify, watch);
    let (session, holder) = held.map_err(|why| format!("{why}: {}", ran.said()))?;
    let run: Value = std::fs::read_to_string(&json_out)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .ok_or_else(|| format!("no run JSON: {}", ran.said()))?;
    let lease = &run["flows"][0]["lease"];
    if lease["held"]["holder"]["agent"] != holder.as_str() || lease["released"] != json!([session])
    {
        return Err(format!(
            "the job did not let its lease on {session} go: {lease}"
        ));
    }
    Ok(())
}

#[tokio::test]
async fn verify_holds_a_lease_on_each_session_it_drives_and_lets_it_go() {
    // The signal never comes: the step waits out its bound, so the replay lasts that long.
    let slow = click_flow("slow", "counter-increment", "never.sent", 6000);
    let rig = rig_with_flows(&[slow]).await;
    verify_holds_and_releases_its_lease(&rig, &[])
        .await
        .unwrap_or_else(|why| panic!("{why}"));

    // Negative control: a verify that takes no lease drives its session unleased, and the
    // check goes red.
    let control =
        verify_holds_and_releases_its_lease(&rig, &[(env::TEST_STAND_IN_VERIFY_SKIPS_LEASES, "1")])
            .await;
    assert!(control.is_err(), "the stand-in was seen to hold a lease");
}
