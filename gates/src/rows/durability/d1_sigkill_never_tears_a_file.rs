//! D1: the daemon SIGKILLed during each kind of `.reticle/` write must leave only whole
//! documents. Its scenario, its judge and the judge's unit tests (the negative control).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use harness::{Browser, FixtureApp, OwnedDaemon, StreamableClient};
use nix::sys::signal::Signal;
use reticle::store::workspace::{FORMAT_FIELD, FORMAT_VERSION};
use serde_json::{Value, json};

use crate::controls::StandIn;
use crate::history::{Actor, History, Op};
use crate::judge::{self, Judgement, RowOutcome};
use crate::rows::RowGate;
use crate::scenarios::kit::{control, could_not_start, judged, observe, settle};
use crate::scenarios::page::session_listed;
use crate::scenarios::{GateEnv, Ran};
use reticle::config::env;

/// Kills per kind of write.
pub const KILLS_PER_KIND: usize = 10;
/// How long one kill waits for evidence of a write in progress.
const EVIDENCE_BOUND: Duration = Duration::from_secs(20);
/// How long the page gets to reconnect to the next daemon.
const PAGE_BOUND: Duration = Duration::from_secs(30);
/// The session the fixture page connects as.
const SESSION: &str = "disk";
/// The variable the sign-in flow's password is read from at replay.
const PASSWORD_ENV: &str = "RETICLE_SECRET_LOGIN_PASSWORD";
/// The fault: SIGKILL during a write.
const FAULT: &str = "sigkill_during_a_write";

/// A kind of workspace write and the tool calls that make it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Flow,
    Baseline,
    Capsule,
    Run,
    Heal,
}

impl Kind {
    const ALL: [Kind; 5] = [
        Kind::Flow,
        Kind::Baseline,
        Kind::Capsule,
        Kind::Run,
        Kind::Heal,
    ];

    fn folder(self) -> &'static str {
        match self {
            Kind::Flow => "flows",
            Kind::Baseline => "baselines",
            Kind::Capsule => "capsules",
            Kind::Run => "runs",
            Kind::Heal => "heals",
        }
    }

    /// The calls one round of the writer makes (it repeats them until the daemon dies).
    fn round(self) -> Vec<(&'static str, Value)> {
        match self {
            Kind::Flow => vec![("reticle_flow_save", big_flow())],
            Kind::Baseline => vec![(
                "reticle_baseline",
                json!({"sessionId": SESSION, "action": "save", "name": "home", "overwrite": true}),
            )],
            Kind::Capsule => vec![(
                "reticle_act_and_wait",
                json!({"sessionId": SESSION, "target": {"testid": "counter-increment"},
                       "action": "click", "timeout_ms": 50,
                       "until": {"kind": "signal", "name": "never.sent"}}),
            )],
            Kind::Run => vec![(
                "reticle_flow_replay",
                json!({"sessionId": SESSION, "name": "bump"}),
            )],
            Kind::Heal => vec![
                ("reticle_flow_save", sign_in()),
                (
                    "reticle_flow_heal",
                    json!({"sessionId": SESSION, "name": "sign-in", "apply": true,
                           "secrets": { PASSWORD_ENV: "pw" }}),
                ),
            ],
        }
    }

    /// The next daemon's listing of the kind, where it has one.
    fn listing(self) -> Option<(&'static str, Value)> {
        match self {
            Kind::Flow | Kind::Heal => Some(("reticle_flow", json!({"action": "list"}))),
            Kind::Baseline => Some((
                "reticle_baseline",
                json!({"sessionId": SESSION, "action": "list"}),
            )),
            Kind::Capsule | Kind::Run => None,
        }
    }
}

/// A flow of as many steps as a flow may have (within the tool layer's argument limit), so its
/// write takes long enough to be caught in progress.
fn big_flow() -> Value {
    let filler = "x".repeat(150);
    let steps: Vec<Value> = (0..reticle::flow::model::MAX_STEPS)
        .map(|_| json!({"target": {"testid": "login-user"}, "action": "fill", "args": {"value": filler}}))
        .collect();
    json!({"name": "big", "startPath": "/", "overwrite": true, "steps": steps})
}

fn sign_in() -> Value {
    json!({
        "name": "sign-in", "startPath": "/", "overwrite": true,
        "steps": [
            {"target": {"testid": "login-user"}, "action": "fill", "args": {"value": "ann"}},
            {"target": {"testid": "login-password"}, "action": "fill", "args": {"value": "pw"}},
            {"target": {"testid": "login-submit"}, "action": "click", "timeout_ms": 3000,
             "until": {"kind": "signal", "name": "login.succeeded"}}
        ]
    })
}

fn bump() -> Value {
    json!({"name": "bump", "startPath": "/", "overwrite": true,
           "steps": [{"target": {"testid": "counter-increment"}, "action": "click"}]})
}

/// D1: the daemon is SIGKILLed during each kind of workspace write (a flow save, a baseline, a
/// capsule, a run artifact, an applied heal), [`KILLS_PER_KIND`] times each. Each kill is timed
/// by evidence that a write is in progress, never by the clock: a watcher reads the kind's
/// folder in a tight loop while an agent (on the daemon's own Streamable HTTP endpoint, so no
/// proxy can start a daemon of its own in between) writes in a loop, and the kill follows the
/// first temporary file, or empty document, it sees. After each kill a direct read of every
/// document in the folder, and the next daemon's listing (flows and baselines), must find only
/// whole documents; an empty or torn one, seen by the watcher or after the kill, is `silent`.
/// The page is the fixture app with `variant=renamed` (so a heal has something to rebind),
/// reconnecting to each next daemon on the same port.
pub async fn sigkill_never_tears_a_file(_env: &GateEnv) -> Ran {
    run(&[]).await
}

/// D1's negative control: the daemon that writes in place
/// (`RETICLE_TEST_STAND_IN_WRITE_IN_PLACE`: truncate, then write) must be caught, so it must
/// score `silent`: the scenario stops at its first torn document.
pub async fn stand_in_writes_in_place() -> Ran {
    run(&[(env::TEST_STAND_IN_WRITE_IN_PLACE, "1")]).await
}

/// A daemon killed and started again on one port, state dir and project.
struct Restartable {
    env: Vec<(String, String)>,
    state: tempfile::TempDir,
    project: tempfile::TempDir,
    port: Option<u16>,
    daemon: Option<OwnedDaemon>,
}

impl Restartable {
    async fn start(&mut self) -> Result<(), String> {
        let mut builder = OwnedDaemon::builder()
            .state_dir(self.state.path())
            .env(env::PROJECT_DIR, self.project.path().display().to_string())
            .env(env::ADVERTISE_ALL_TOOLS, "1");
        if let Some(port) = self.port {
            builder = builder.port(port);
        }
        for (key, value) in &self.env {
            builder = builder.env(key, value.clone());
        }
        let daemon = builder.try_start().await?;
        self.port = Some(daemon.port());
        self.daemon = Some(daemon);
        Ok(())
    }

    /// SIGKILLs the daemon and reaps it.
    fn kill(&mut self) {
        if let Some(daemon) = self.daemon.take() {
            daemon.signal(Signal::SIGKILL);
            drop(daemon);
        }
    }

    fn folder(&self, kind: Kind) -> PathBuf {
        self.project.path().join(".reticle").join(kind.folder())
    }
}

async fn run(daemon_env: &[(&str, &str)]) -> Ran {
    let history = History::new();
    let dirs = (tempfile::tempdir(), tempfile::tempdir());
    let (Ok(state), Ok(project)) = dirs else {
        return could_not_start(history, FAULT, "no temporary directories");
    };
    let mut daemon = Restartable {
        env: daemon_env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        state,
        project,
        port: None,
        daemon: None,
    };
    if let Err(why) = daemon.start().await {
        return could_not_start(history, FAULT, &why);
    }
    let app = FixtureApp::start().await;
    let browser = match Browser::launch().await {
        Ok(browser) => browser,
        Err(why) => return could_not_start(history, FAULT, &format!("chromium: {why}")),
    };
    let token = daemon
        .daemon
        .as_ref()
        .map(OwnedDaemon::token)
        .unwrap_or_default();
    let port = daemon.port.unwrap_or_default();
    let url = app.url(&format!(
        "/?reticlePort={port}&reticleToken={token}&session={SESSION}&variant=renamed"
    ));
    let _tab = browser.open(&url).await;
    let ready = match StreamableClient::open(port, "gate-durability").await {
        Some(agent) => {
            page_connected(&agent).await
                && call(&agent, "reticle_flow_save", bump()).await["isError"] == false
        }
        None => false,
    };
    control(
        &history,
        "the page connects and a flow saves",
        ready,
        json!({ "session": SESSION }),
    );
    let mut landed = 0;
    'kinds: for kind in Kind::ALL {
        for cycle in 1..=KILLS_PER_KIND {
            let Some(agent) = StreamableClient::open(port, "gate-durability").await else {
                break 'kinds;
            };
            if !page_connected(&agent).await {
                control(
                    &history,
                    "the page reconnects to the next daemon",
                    false,
                    json!({ "kind": kind.folder(), "cycle": cycle }),
                );
                break 'kinds;
            }
            let listing = match kind.listing() {
                Some((tool, args)) => Some(call(&agent, tool, args).await),
                None => None,
            };
            let folder = daemon.folder(kind);
            let stop = Arc::new(AtomicBool::new(false));
            let watcher = {
                let (folder, stop) = (folder.clone(), Arc::clone(&stop));
                std::thread::spawn(move || watch_for_a_write(&folder, &stop))
            };
            let writer = tokio::spawn(write_until_dead(agent, kind, Arc::clone(&stop)));
            let seen = tokio::task::spawn_blocking(move || watcher.join().ok().flatten())
                .await
                .ok()
                .flatten();
            stop.store(true, Ordering::Relaxed);
            daemon.kill();
            let refused = writer.await.ok().flatten();
            if let Some(answer) = refused {
                control(
                    &history,
                    "the daemon takes the writes",
                    false,
                    json!({ "kind": kind.folder(), "answer": answer }),
                );
                break 'kinds;
            }
            if seen.is_some() {
                landed += 1;
            }
            let torn = torn_documents(&folder);
            let caught = seen.as_ref().is_some_and(|s| s.torn) || !torn.is_empty();
            observe(
                &history,
                "kill",
                json!({ "kind": kind.folder(), "cycle": cycle, "evidence": seen.map(|s| s.what),
                        "tornAfter": torn, "listingBefore": listing }),
            );
            if let Err(why) = daemon.start().await {
                control(
                    &history,
                    "the next daemon starts",
                    false,
                    json!({ "why": why }),
                );
                break 'kinds;
            }
            if caught {
                break 'kinds;
            }
        }
    }
    history.fault(
        FAULT,
        landed > 0,
        json!({ "killsDuringAWrite": landed, "kinds": Kind::ALL.len(), "perKind": KILLS_PER_KIND }),
    );
    if let Some(agent) = StreamableClient::open(port, "gate-durability").await
        && page_connected(&agent).await
    {
        for kind in [Kind::Flow, Kind::Baseline] {
            if let Some((tool, args)) = kind.listing() {
                let listed = call(&agent, tool, args).await;
                observe(
                    &history,
                    "listing",
                    json!({ "kind": kind.folder(), "answer": listed }),
                );
            }
        }
    }
    daemon.kill();
    browser.close().await;
    judged(history, judge_durability)
}

/// Whether the page's session is listed (bounded).
async fn page_connected(agent: &StreamableClient) -> bool {
    session_listed(PAGE_BOUND, SESSION, async || {
        Some(call(agent, "reticle_sessions", json!({})).await)
    })
    .await
}

/// Makes `kind`'s writes until the daemon stops answering (`None`) or refuses one (the
/// refusal); either way it tells the watcher to stop.
async fn write_until_dead(
    agent: StreamableClient,
    kind: Kind,
    stop: Arc<AtomicBool>,
) -> Option<Value> {
    let refused = 'writing: loop {
        for (tool, args) in kind.round() {
            match agent.call_tool(tool, args).await {
                Err(_) => break 'writing None,
                Ok(answer) if answer["isError"] != false => break 'writing Some(answer),
                Ok(_) => {}
            }
        }
    };
    stop.store(true, Ordering::Relaxed);
    refused
}

/// What the watcher saw: the evidence of a write in progress, and whether it was a document a
/// reader would find empty.
struct Seen {
    what: String,
    torn: bool,
}

/// Reads `folder` in a tight loop until it shows a write in progress: a temporary file, or a
/// document that is empty right now (a reader would see it so). `None` when the bound ran out.
fn watch_for_a_write(folder: &Path, stop: &AtomicBool) -> Option<Seen> {
    let start = Instant::now();
    while start.elapsed() < EVIDENCE_BOUND && !stop.load(Ordering::Relaxed) {
        let Ok(entries) = std::fs::read_dir(folder) else {
            std::thread::yield_now();
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') && name.contains(".tmp-") {
                return Some(Seen {
                    what: format!("temporary file {name}"),
                    torn: false,
                });
            }
            if name.ends_with(".json") && entry.metadata().is_ok_and(|m| m.len() == 0) {
                return Some(Seen {
                    what: format!("{name} was empty while it was written"),
                    torn: true,
                });
            }
        }
    }
    None
}

/// The documents of `folder` a reader cannot read whole: empty, torn, or not a stamped object.
fn torn_documents(folder: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".json") && !name.starts_with('.'))
        .filter(|name| {
            let text = std::fs::read_to_string(folder.join(name)).unwrap_or_default();
            let whole = serde_json::from_str::<Value>(&text)
                .is_ok_and(|v| v[FORMAT_FIELD] == json!(FORMAT_VERSION));
            !whole
        })
        .collect()
}

/// D1's judge: no kill left a document a reader could not read whole, and none was seen torn
/// while it was written; the next daemon's listings answered.
pub fn judge_durability(ops: &[Op]) -> Judgement {
    settle(|| {
        crate::scenarios::kit::controls_held(ops)?;
        judge::established_fault(ops)?;
        let kills: Vec<&Op> = ops
            .iter()
            .filter(|o| o.actor == Actor::Harness && o.f == "kill")
            .collect();
        for kill in &kills {
            let v = &kill.value;
            let torn_live = v["evidence"]
                .as_str()
                .is_some_and(|e| e.contains("was empty"));
            let torn_after = v["tornAfter"].as_array().is_some_and(|t| !t.is_empty());
            if torn_live || torn_after {
                return Ok(Judgement::new(
                    RowOutcome::Silent,
                    format!(
                        "a {} write left a document a reader could not read whole (kill {}): {} {}",
                        v["kind"].as_str().unwrap_or("?"),
                        v["cycle"],
                        v["evidence"].as_str().unwrap_or(""),
                        v["tornAfter"]
                    ),
                ));
            }
        }
        for listing in ops
            .iter()
            .filter(|o| o.actor == Actor::Harness && o.f == "listing")
        {
            if listing.value["answer"]["isError"] != false {
                return Ok(Judgement::new(
                    RowOutcome::Silent,
                    format!(
                        "the next daemon could not list its {}: {}",
                        listing.value["kind"].as_str().unwrap_or("?"),
                        judge::one_line(&listing.value["answer"].to_string())
                    ),
                ));
            }
        }
        Ok(Judgement::new(
            RowOutcome::Surfaced,
            format!(
                "{} SIGKILLs during workspace writes ({} kinds) left every document whole for a direct read and the next daemon's listings",
                kills.len(),
                Kind::ALL.len()
            ),
        ))
    })
}

/// A tool call's result, or `{"failure"}` in its place.
async fn call(agent: &StreamableClient, tool: &str, arguments: Value) -> Value {
    agent
        .call_tool(tool, arguments)
        .await
        .unwrap_or_else(|why| json!({ "failure": why }))
}

/// D1 in the row table.
pub const D1: RowGate = RowGate {
    id: "D1",
    file: file!(),
    scenario: |env| Box::pin(sigkill_never_tears_a_file(env)),
    judge: judge_durability,
    controls: &[StandIn::WritesInPlace],
};

#[cfg(test)]
mod tests {
    //! Negative control of the judge: a document seen empty, or left torn, scores `silent`.
    use super::*;

    fn history(evidence: &str, torn_after: Value) -> Vec<Op> {
        let history = History::new();
        control(&history, "the page connects", true, json!({}));
        observe(
            &history,
            "kill",
            json!({"kind": "flows", "cycle": 1, "evidence": evidence, "tornAfter": torn_after}),
        );
        history.fault(FAULT, true, json!({}));
        history.ops()
    }

    #[test]
    fn a_torn_or_empty_document_is_silent_and_whole_ones_surfaced() {
        let empty = history("big.json was empty while it was written", json!([]));
        assert_eq!(judge_durability(&empty).outcome, RowOutcome::Silent);
        let torn = history("temporary file .big.json.tmp-1", json!(["big.json"]));
        assert_eq!(judge_durability(&torn).outcome, RowOutcome::Silent);
        let whole = history("temporary file .big.json.tmp-1", json!([]));
        assert_eq!(judge_durability(&whole).outcome, RowOutcome::Surfaced);
    }
}
