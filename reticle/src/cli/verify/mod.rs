//! `reticle verify <url>`: the saved flows as a CI job. It checks the `--flows` names
//! ([`select`]) and that the URL answers ([`reach`]) before launching anything, then shares the
//! flows among `--jobs` workers, each with its own Chromium ([`browser`]), lease ([`lease`]) and
//! MCP stream ([`client`]), prints a line per flow ([`report`]) and records the suite as a run.
//! Exit codes are [`VerifyCode`]: a died browser or a run where nothing ran is never a pass.
//! It orchestrates; it must not replay a step or judge one.

mod client;
mod diagnose;
mod lease;
mod reach;
mod report;
mod select;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::{Value, json};
use tokio::sync::watch;

use super::exit::{Exit, VerifyCode};
use super::serve::{Serving, ensure};
use crate::chromium::{Chromium as JobBrowser, LaunchSpec};
use crate::config::env;
use crate::daemon::log::now_rfc3339;
use crate::flow::runs::{Run, RunKind, RunVerdict, failure_text};
use crate::flow::store::load_flow;
use crate::flow::suite::{COULD_NOT_RUN, Verified, suite_verdict};
use crate::probe::fetch_status;
use crate::store::workspace::Workspace;
use crate::tools::ToolName;
use crate::wire::session_param::with_session;
use client::ToolClient;
use report::{Outputs, Progress, table};

/// How long an `unknown` flow waits for its browser's death to show before its verdict is
/// believed (a dead browser is seen within milliseconds; a live one costs this once).
const DEATH_SHOWS_WITHIN: Duration = Duration::from_secs(2);

/// How often the daemon's `/status` is read while a session is awaited.
const SESSION_POLL: Duration = Duration::from_millis(50);
/// How long one `/status` read may take.
const STATUS_BOUND: Duration = Duration::from_millis(1000);
/// The longest one flow's replay may take before it is counted `unknown`.
const FLOW_BOUND: Duration = Duration::from_secs(300);
/// The most jobs at once.
pub const MAX_JOBS: u16 = 16;

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The app's URL as a browser opens it (with whatever your app needs to load the Reticle
    /// SDK and connect it to this port).
    pub url: String,
    /// Only these flows (comma-separated names); default every saved flow.
    #[arg(long, value_delimiter = ',', value_name = "NAME,...", value_parser = flow_name)]
    pub flows: Option<Vec<String>>,
    /// Only flows whose `paths` globs match a file `git diff --name-only GIT-REV` lists (a flow
    /// without `paths` always runs); each skipped flow is named with why.
    #[arg(long, value_name = "GIT-REV")]
    pub changed: Option<String>,
    /// Flows run in this many isolated browsers at once (each flow in a fresh context).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=MAX_JOBS as i64))]
    pub jobs: u16,
    /// Write the run as JUnit XML (one testcase per flow).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write the run artifact as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the run as Markdown (for a pull-request comment).
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// How long a page gets to connect its session: when it opens, and again should a flow's
    /// replay have to load its start path anew.
    #[arg(long, value_name = "MS", default_value_t = 15_000)]
    pub timeout_ms: u64,
}

/// What the jobs share: the queue, the daemon link, and what went wrong.
struct Shared<'a> {
    queue: Mutex<VecDeque<(usize, String)>>,
    records: Mutex<Vec<Option<Value>>>,
    progress: Mutex<Progress>,
    port: u16,
    url: &'a str,
    workspace: &'a Workspace,
    bound: Duration,
    run_tag: String,
    began_at: String,
    /// The first infrastructure failure (browser, daemon, transport, no session): the run can
    /// no longer pass, and no further flow starts.
    broken: Mutex<Option<String>>,
    stop: AtomicBool,
    /// When verify began, and how long after it the first flow's replay started.
    launched: Instant,
    first_replay: Mutex<Option<Duration>>,
    /// Turns true once job 1's first page is up (or job 1 is done): later jobs launch then.
    first_page_up: watch::Sender<bool>,
}

impl Shared<'_> {
    fn finish(&self, index: usize, record: Value) {
        self.progress
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .finished(&record);
        self.records.lock().unwrap_or_else(|p| p.into_inner())[index] = Some(record);
    }

    fn break_run(&self, why: String) {
        self.stop.store(true, Ordering::SeqCst);
        self.broken
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(why);
    }

    /// Whether a failure has ended the run: no further flow starts.
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    fn next(&self) -> Option<(usize, String)> {
        if self.stopped() {
            return None;
        }
        self.queue
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop_front()
    }
}

/// A flow that did not run, as its record.
fn not_run(name: &str, because: &str) -> Value {
    json!({
        "name": name,
        "verified": Verified::Unknown,
        "reason": COULD_NOT_RUN,
        "because": because,
        "steps": [],
        "durationMs": 0,
    })
}

/// `url` at `start_path` (a path on the URL's origin, maybe with a query of its own): the
/// URL's path replaced, its query kept after the start path's (it may carry the SDK's
/// settings), its fragment kept.
fn at_start(url: &str, start_path: &str) -> String {
    let (base, fragment) = match url.split_once('#') {
        Some((base, fragment)) => (base, Some(fragment)),
        None => (url, None),
    };
    let (base, query) = match base.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (base, None),
    };
    let after_scheme = base.find("://").map_or(0, |i| i + 3);
    let origin = base[after_scheme..]
        .find('/')
        .map_or(base, |i| &base[..after_scheme + i]);
    let mut out = format!("{origin}{start_path}");
    if let Some(query) = query.filter(|q| !q.is_empty()) {
        out.push(if start_path.contains('?') { '&' } else { '?' });
        out.push_str(query);
    }
    if let Some(fragment) = fragment {
        out.push('#');
        out.push_str(fragment);
    }
    out
}

/// Where `name`'s page opens: the URL at the flow's start path; the URL as given when the flow
/// cannot be read (its replay then says why it is unknown).
fn flow_url(url: &str, workspace: &Workspace, name: &str) -> String {
    match load_flow(workspace, name) {
        Ok(flow) => at_start(url, &flow.start_path),
        Err(_) => url.to_string(),
    }
}

/// The session id the page of job `job`'s flow `index` (from 0) connects with.
fn flow_session(run_tag: &str, job: usize, index: usize) -> String {
    format!("{run_tag}-j{job}-f{}", index + 1)
}

impl VerifyArgs {
    /// The report files asked for.
    fn outputs(&self) -> Outputs {
        Outputs {
            junit: self.junit.clone(),
            json: self.json.clone(),
            markdown: self.markdown.clone(),
        }
    }
}

/// One name of `--flows`, trimmed; an empty one (`--flows ""`, `--flows a,,b`) is refused.
fn flow_name(raw: &str) -> Result<String, String> {
    match raw.trim() {
        "" => Err("a flow name cannot be empty: --flows takes saved flows' names separated by commas, such as --flows login,checkout".into()),
        name => Ok(name.to_string()),
    }
}

/// The project whose flows run: `RETICLE_PROJECT_DIR`, else the working directory.
fn project_dir() -> Result<PathBuf, Exit> {
    match std::env::var_os(env::PROJECT_DIR) {
        Some(dir) => Ok(PathBuf::from(dir)),
        None => std::env::current_dir().map_err(|e| {
            Exit::verify(
                VerifyCode::Unproven,
                format!("the working directory cannot be read: {e}"),
            )
        }),
    }
}

/// The exit code a finished suite earns.
fn outcome(verdicts: &[Verified], broken: bool) -> VerifyCode {
    match suite_verdict(verdicts) {
        Verified::No => VerifyCode::Regressed,
        Verified::Yes if !broken => VerifyCode::Passed,
        _ => VerifyCode::Unproven,
    }
}

pub async fn verify(args: VerifyArgs, port: u16) -> Result<(), Exit> {
    let launched = Instant::now();
    if !(args.url.starts_with("http://") || args.url.starts_with("https://")) {
        return Err(Exit::verify(
            VerifyCode::Usage,
            format!(
                "'{}' is not an http(s) URL; pass the app's URL as a browser opens it",
                args.url
            ),
        ));
    }
    if let Some(why) = args.outputs().obstacle() {
        return Err(Exit::verify(VerifyCode::Usage, why));
    }
    let project = project_dir()?;
    let workspace = Workspace::of_project(&project);
    let changed = match &args.changed {
        Some(rev) => Some(
            select::changed_files(&project, rev)
                .map_err(|why| Exit::verify(VerifyCode::Usage, why))?,
        ),
        None => None,
    };
    let selection = select::select(&workspace, args.flows.clone(), changed.as_deref())
        .map_err(|why| Exit::verify(VerifyCode::Usage, why))?;
    for skipped in &selection.skipped {
        println!("skipped {}: {}", skipped.name, skipped.why);
    }
    if selection.run.is_empty() {
        let why = match &changed {
            Some(files) => format!(
                "no flow covers the {} file(s) changed since {}: every flow declares paths and none matches, so nothing ran and nothing was verified",
                files.len(),
                args.changed.as_deref().unwrap_or("")
            ),
            None => format!(
                "no flow is saved in {}, so nothing ran and nothing was verified; save flows with reticle_flow_save",
                workspace.root().display()
            ),
        };
        return Err(Exit::verify(VerifyCode::Unproven, why));
    }
    // Nothing listening at the URL is named as that, before a browser or a daemon is started
    // (a page that never loads would otherwise be blamed on its SDK).
    reach::app_listens(&args.url, Duration::from_millis(args.timeout_ms))
        .await
        .map_err(|why| Exit::verify(VerifyCode::Unproven, why))?;

    let serving = ensure(port)
        .await
        .map_err(|exit| exit.into_verify(VerifyCode::Unproven))?;
    let result = run_suite(&args, port, &workspace, selection.run, launched).await;
    if matches!(serving, Serving::Started { .. }) {
        // The daemon this run started ends with it; a reused one is left as it was.
        let _ = super::stop::stop(port, false).await;
    }
    result
}

async fn run_suite(
    args: &VerifyArgs,
    port: u16,
    workspace: &Workspace,
    names: Vec<String>,
    launched: Instant,
) -> Result<(), Exit> {
    let run = Run::begin(RunKind::Verify);
    let jobs = usize::from(args.jobs).min(names.len());
    let agents: Vec<String> = (1..=jobs)
        .map(|job| lease::job_agent(run.id(), job))
        .collect();
    // Job n's first flow is the n-th: its URL goes to Chromium's command line, so the page
    // loads while the DevTools link is made. The rest are taken from the queue as jobs free up.
    let first_urls: Vec<String> = (0..jobs)
        .map(|index| {
            let session = flow_session(run.id(), index + 1, index);
            with_session(&flow_url(&args.url, workspace, &names[index]), &session)
        })
        .collect();
    // Job 1's browser starts with the links; the others once job 1's first page is up, so two
    // Chromiums never start on the same cores at once and the first step comes as soon as alone.
    let (links, first_browser) = futures_util::future::join(
        futures_util::future::join_all(agents.iter().map(|agent| ToolClient::connect(port, agent))),
        JobBrowser::launch(job_spec(1, &first_urls[0])),
    )
    .await;
    let clients = links
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .map_err(|why| Exit::verify(VerifyCode::Unproven, why))?;
    let first_browser = first_browser.map_err(|why| Exit::verify(VerifyCode::Unproven, why))?;
    announce(1, &first_browser);
    let total = names.len();
    let shared = Shared {
        queue: Mutex::new(names.iter().cloned().enumerate().skip(jobs).collect()),
        records: Mutex::new(vec![None; total]),
        progress: Mutex::new(Progress::new(total)),
        port,
        url: &args.url,
        workspace,
        bound: Duration::from_millis(args.timeout_ms),
        run_tag: run.id().to_string(),
        began_at: now_rfc3339(),
        broken: Mutex::new(None),
        stop: AtomicBool::new(false),
        launched,
        first_replay: Mutex::new(None),
        first_page_up: watch::Sender::new(false),
    };
    let mut first_browser = Some(first_browser);
    let workers = clients
        .iter()
        .zip(first_urls)
        .enumerate()
        .map(|(i, (client, first_url))| {
            let first = (i, names[i].clone());
            run_job(
                &shared,
                i + 1,
                client,
                first,
                first_browser.take(),
                first_url,
            )
        });
    futures_util::future::join_all(workers).await;

    let broken = shared
        .broken
        .into_inner()
        .unwrap_or_else(|p| p.into_inner());
    let records: Vec<Value> = shared
        .records
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .zip(&names)
        .map(|(record, name)| {
            record.unwrap_or_else(|| {
                let why = broken.as_deref().unwrap_or("the run ended before it");
                not_run(name, &format!("not run: {why}"))
            })
        })
        .collect();
    let verdicts: Vec<Verified> = records
        .iter()
        .map(|r| match r["verified"].as_str() {
            Some("yes") => Verified::Yes,
            Some("no") => Verified::No,
            _ => Verified::Unknown,
        })
        .collect();
    let code = outcome(&verdicts, broken.is_some());
    let count = |v: Verified| verdicts.iter().filter(|x| **x == v).count();
    let mut because = format!(
        "{} flow(s): {} yes, {} no, {} unknown",
        verdicts.len(),
        count(Verified::Yes),
        count(Verified::No),
        count(Verified::Unknown)
    );
    if let Some(why) = &broken {
        because.push_str(&format!("; the run broke: {why}"));
    }
    let verified = match code {
        VerifyCode::Passed => Verified::Yes,
        VerifyCode::Regressed => Verified::No,
        _ => Verified::Unknown,
    };
    let outcome_record = RunVerdict {
        verified,
        because: &because,
        flows: &records,
    };
    let mut document = Value::Object(run.document(&outcome_record));
    if let Some(first) = *shared
        .first_replay
        .lock()
        .unwrap_or_else(|p| p.into_inner())
    {
        document["launchToFirstReplayMs"] = json!(first.as_millis() as u64);
    }
    print!("\n{}", table(&records));
    match run.save(workspace, &outcome_record) {
        Ok(path) => println!("run artifact: {path}"),
        Err(why) => eprintln!("reticle verify: {why}"),
    }
    let unwritten = args.outputs().write(&document);
    for why in &unwritten {
        eprintln!("reticle verify: {why}");
    }
    match code {
        VerifyCode::Passed if unwritten.is_empty() => {
            println!("verified: {because}");
            Ok(())
        }
        VerifyCode::Passed => Err(Exit::verify(
            VerifyCode::Unproven,
            "every flow passed, but a report file asked for could not be written",
        )),
        code => Err(Exit::verify(
            code,
            summary(code, broken.as_deref(), &because, &records),
        )),
    }
}

/// The closing sentence of a run that did not pass: the verdict (an infrastructure failure
/// named first) and each flow that is not yes.
fn summary(code: VerifyCode, broken: Option<&str>, because: &str, records: &[Value]) -> String {
    let head = match (code, broken) {
        (VerifyCode::Regressed, _) => "a flow is no: the app regressed".to_string(),
        (_, Some(why)) => format!("infrastructure failed: {why}; nothing proven"),
        _ => "nothing proven".to_string(),
    };
    let flows: Vec<String> = records
        .iter()
        .filter(|r| r["verified"] != "yes")
        .map(|r| {
            format!(
                "{} is {}: {}",
                r["name"].as_str().unwrap_or("(unnamed)"),
                r["verified"].as_str().unwrap_or("unknown"),
                failure_text(r)
            )
        })
        .collect();
    format!("{head} ({because})\n  {}", flows.join("\n  "))
}

/// What job `number` launches: a headless Chromium whose profile names the job, opening
/// `first_url` first.
fn job_spec(number: usize, first_url: &str) -> LaunchSpec<'_> {
    LaunchSpec {
        label: format!("reticle-verify-{number}"),
        headless: true,
        first_url,
    }
}

/// Says which browser a job runs (its pid: what a person, or a test, kills it by).
fn announce(number: usize, browser: &JobBrowser) {
    eprintln!(
        "reticle verify: chromium started (job {number}, pid {})",
        browser.pid().map_or("unknown".into(), |p| p.to_string())
    );
}

/// One job from start to end: its browser (given for job 1; any other job launches its own
/// once the first page is up), its flows, then the browser closed. A browser that cannot start
/// breaks the run.
async fn run_job(
    shared: &Shared<'_>,
    number: usize,
    client: &ToolClient,
    first: (usize, String),
    browser: Option<JobBrowser>,
    first_url: String,
) {
    let browser = match browser {
        Some(browser) => browser,
        None => {
            let _ = shared.first_page_up.subscribe().wait_for(|up| *up).await;
            if shared.stopped() {
                return;
            }
            match JobBrowser::launch(job_spec(number, &first_url)).await {
                Ok(browser) => {
                    announce(number, &browser);
                    browser
                }
                Err(why) => {
                    shared.break_run(why.clone());
                    shared.finish(first.0, not_run(&first.1, &why));
                    return;
                }
            }
        }
    };
    job(shared, number, &browser, client, first).await;
    shared.first_page_up.send_replace(true);
    browser.close().await;
}

/// One job's flows: its `first` in the browser's start-up tab, then flows off the queue until
/// it is empty or the run broke. `client` is the job's own link (its own agent, for the lease
/// book).
async fn job(
    shared: &Shared<'_>,
    number: usize,
    browser: &JobBrowser,
    client: &ToolClient,
    first: (usize, String),
) {
    let mut start_up = Some(first).filter(|_| !shared.stopped());
    while let Some((index, name)) = start_up.clone().or_else(|| shared.next()) {
        if browser.died() {
            shared.break_run(format!("the browser of job {number} died"));
            shared.finish(
                index,
                not_run(&name, &format!("not run: the browser of job {number} died")),
            );
            break;
        }
        let session = flow_session(&shared.run_tag, number, index);
        let clock = Instant::now();
        let opened = if start_up.take().is_some() {
            browser.start_up_page().await
        } else {
            let url = with_session(&flow_url(shared.url, shared.workspace, &name), &session);
            browser.open(&url).await
        };
        let page = match opened {
            Ok(page) => page,
            Err(why) => {
                let why = if browser.died() {
                    format!("the browser of job {number} died ({why})")
                } else {
                    why
                };
                shared.break_run(why.clone());
                shared.finish(index, not_run(&name, &why));
                break;
            }
        };
        let awaited = await_session(shared, browser, &session).await;
        shared.first_page_up.send_replace(true);
        if let Err(why) = awaited {
            shared.break_run(why.clone());
            shared.finish(index, not_run(&name, &why));
            if !browser.died() {
                browser.close_page(page).await;
            }
            break;
        }
        // The session is this job's alone from here on: leased, so no other agent (or job)
        // drives it while the flow replays, and never driven when another holder has it.
        let held = match lease::acquire(client, &session).await {
            Ok(held) => held,
            Err(why) => {
                // A page that left between being seen and being leased may have left with its
                // browser: that death, once it shows, is what the run reports.
                if !browser.died() && session_gone(shared, &session).await {
                    let _ = tokio::time::timeout(DEATH_SHOWS_WITHIN, browser.death()).await;
                }
                if browser.died() {
                    let why =
                        format!("the browser of job {number} died before its flow was driven");
                    shared.break_run(why.clone());
                    shared.finish(index, not_run(&name, &why));
                    break;
                }
                let why = format!("not driven: the job could not lease session {session}: {why}");
                shared.finish(index, not_run(&name, &why));
                browser.close_page(page).await;
                continue;
            }
        };
        shared
            .first_replay
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert_with(|| shared.launched.elapsed());
        // A browser that dies mid-flow ends the flow at once: what the replay says after that
        // is about a page that is gone.
        let replayed = tokio::select! {
            record = replay(client, &name, &session, shared.bound) => Some(record),
            () = browser.death() => None,
        };
        // The page going away can reach the replay (an `unknown` step) before the browser's
        // death reaches its watch: an unknown flow gives the death a bounded moment to show
        // before it is believed.
        if replayed
            .as_ref()
            .is_some_and(|r| r["verified"] == "unknown")
            && !browser.died()
        {
            let _ = tokio::time::timeout(DEATH_SHOWS_WITHIN, browser.death()).await;
        }
        let Some(mut record) = replayed.filter(|_| !browser.died()) else {
            let why = format!("the browser of job {number} died during the flow");
            shared.break_run(why.clone());
            shared.finish(index, not_run(&name, &why));
            break;
        };
        record["openMs"] = json!(
            (clock.elapsed().as_millis() as u64)
                .saturating_sub(record["durationMs"].as_u64().unwrap_or(0))
        );
        record["lease"] = lease::release(client, &held).await;
        shared.finish(index, record);
        browser.close_page(page).await;
    }
}

/// Whether the daemon no longer lists `session` (a daemon that does not answer says nothing).
async fn session_gone(shared: &Shared<'_>, session: &str) -> bool {
    fetch_status(shared.port, STATUS_BOUND)
        .await
        .is_some_and(|status| !status.sessions.iter().any(|s| s.id == session))
}

/// Waits until the daemon lists `session`; a sentence naming the likely cause when it does not
/// within the bound, or when the browser dies first.
async fn await_session(
    shared: &Shared<'_>,
    browser: &JobBrowser,
    session: &str,
) -> Result<(), String> {
    let deadline = Instant::now() + shared.bound;
    loop {
        let status = match fetch_status(shared.port, STATUS_BOUND).await {
            Some(status) if status.sessions.iter().any(|s| s.id == session) => return Ok(()),
            Some(status) => status,
            None => {
                return Err(format!(
                    "the daemon on port {} stopped answering /status while the page loaded",
                    shared.port
                ));
            }
        };
        if browser.died() {
            return Err("the browser died while the page loaded".into());
        }
        if Instant::now() >= deadline {
            let refused: Vec<_> = status
                .refused
                .into_iter()
                .filter(|r| r.at >= shared.began_at)
                .collect();
            let strangers: Vec<_> = status
                .sessions
                .into_iter()
                .filter(|s| s.connected_at >= shared.began_at && !s.id.starts_with(&shared.run_tag))
                .collect();
            return Err(diagnose::no_session(&diagnose::Waited {
                url: shared.url,
                session,
                port: shared.port,
                bound: shared.bound,
                refused: &refused,
                strangers: &strangers,
            }));
        }
        tokio::time::sleep(SESSION_POLL).await;
    }
}

/// Has the daemon replay `name` on `session` (through `reticle_run`: the replay tool is on the
/// extended surface), telling it the page was just opened at the flow's start path in a fresh
/// context, and giving the page `arrival` to come back should the replay find it elsewhere and
/// navigate: the same bound its first load had; the flow's record (the tool's answer without
/// the call's own fields), or an `unknown` record saying why the call failed.
async fn replay(client: &ToolClient, name: &str, session: &str, arrival: Duration) -> Value {
    let call = client.call(
        ToolName::Run.as_str(),
        json!({"tool": ToolName::FlowReplay.as_str(),
               "args": {"name": name, "sessionId": session,
                        "arrivalTimeoutMs": arrival.as_millis() as u64,
                        "freshAtStart": true}}),
    );
    match tokio::time::timeout(FLOW_BOUND, call).await {
        Ok(Ok((mut answer, false))) => {
            if let Some(map) = answer.as_object_mut() {
                for key in ["ok", "tool", "runId", "runSaved", "runError", "session"] {
                    map.remove(key);
                }
            }
            answer
        }
        Ok(Ok((refusal, true))) => {
            let mut record = not_run(name, refusal["reason"].as_str().unwrap_or("refused"));
            record["recovery"] = refusal["recovery"].clone();
            record
        }
        Ok(Err(why)) => not_run(name, &format!("the replay call failed: {why}")),
        Err(_) => not_run(
            name,
            &format!(
                "the replay did not answer within {} s",
                FLOW_BOUND.as_secs()
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Verified::{No, Unknown, Yes};

    #[test]
    fn only_a_whole_unbroken_yes_suite_passes() {
        assert_eq!(outcome(&[Yes, Yes], false), VerifyCode::Passed);
        assert_eq!(outcome(&[Yes, Yes], true), VerifyCode::Unproven);
        assert_eq!(outcome(&[Yes, No, Unknown], true), VerifyCode::Regressed);
        assert_eq!(outcome(&[Yes, Unknown], false), VerifyCode::Unproven);
        assert_eq!(outcome(&[], false), VerifyCode::Unproven);
    }

    /// The closing text names each failing flow's step once, as the player's reason does
    /// (`step 3: step 3 of 4 ...` said it twice).
    #[test]
    fn the_summary_names_a_failing_step_once() {
        let records = [
            json!({"name": "ping", "verified": "yes"}),
            json!({"name": "todo", "verified": "no", "failingStep": 3,
                   "because": "step 3 of 4 (click {\"testid\":\"add\"}) was no: the list did not grow"}),
            json!({"name": "free", "verified": "unknown", "because": "all 2 steps ran, but the flow is assertion-free"}),
        ];
        let text = summary(
            VerifyCode::Regressed,
            None,
            "3 flow(s): 1 yes, 1 no, 1 unknown",
            &records,
        );
        assert_eq!(
            text,
            "a flow is no: the app regressed (3 flow(s): 1 yes, 1 no, 1 unknown)\n  \
             todo is no: step 3 of 4 (click {\"testid\":\"add\"}) was no: the list did not grow\n  \
             free is unknown: all 2 steps ran, but the flow is assertion-free"
        );
        assert_eq!(text.matches("step 3").count(), 1, "{text}");
    }

    #[test]
    fn a_flow_opens_at_its_start_path_with_the_url_s_query_and_fragment() {
        let url = "http://h:1/app/?reticlePort=9&reticleToken=t#top";
        assert_eq!(
            at_start(url, "/"),
            "http://h:1/?reticlePort=9&reticleToken=t#top"
        );
        assert_eq!(
            at_start(url, "/login?next=a"),
            "http://h:1/login?next=a&reticlePort=9&reticleToken=t#top"
        );
        assert_eq!(
            at_start("http://h:1", "/index.html"),
            "http://h:1/index.html"
        );
        assert_eq!(at_start("http://h:1/x?", "/"), "http://h:1/");
    }
}
