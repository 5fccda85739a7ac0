//! The flow rows (F1 to F3), one file each, and what they share: the real stack an agent saves,
//! replays and heals flows on ([`FlowRig`]: a daemon serving a private project, the fixture app
//! in Chromium, an agent's `reticle mcp`), the flows it saves, and each row's stand-in switch.

pub mod f1_heal_never_guesses;
pub mod f2_assertion_free_never_yes;
pub mod f3_stale_never_replayed;

use std::time::Duration;

use harness::{Browser, FixtureApp, McpClient, OwnedDaemon, ProxyOptions};
use serde_json::{Value, json};

use crate::history::{Actor, Op};
use crate::scenarios::page::{PageStack, session_listed};
use crate::scenarios::{GateEnv, Ran};
use reticle::config::env;

/// How long a page gets to connect.
const BOUND: Duration = Duration::from_secs(30);
/// The variable the sign-in flow's password is read from at replay.
pub(super) const PASSWORD_ENV: &str = "RETICLE_SECRET_LOGIN_PASSWORD";

/// The stand-in switch each row's negative control starts its daemon with: run against it, the
/// row's scenario and judge must score `silent`.
pub fn stand_in(row: &str) -> Option<&'static str> {
    match row {
        "F1" => Some(env::TEST_STAND_IN_HEAL_GUESSES),
        "F2" => Some(env::TEST_STAND_IN_GRADE_ASSERTED),
        "F3" => Some(env::TEST_STAND_IN_STORED_REF),
        _ => None,
    }
}

/// Runs `row`'s scenario against a daemon started with its stand-in switch on.
pub async fn with_stand_in(row: &'static str) -> Ran {
    let real = GateEnv {
        reticle: harness::binaries::reticle(),
    };
    let switch = stand_in(row).map(|s| (s, "1"));
    let daemon_env: Vec<(&str, &str)> = switch.into_iter().collect();
    match row {
        "F1" => f1_heal_never_guesses::heal(&real, &daemon_env).await,
        "F2" => f2_assertion_free_never_yes::assertion_free(&real, &daemon_env).await,
        _ => f3_stale_never_replayed::stale_refs(&real, &daemon_env).await,
    }
}

/// A daemon serving a private project, the fixture app, Chromium and an agent.
pub struct FlowRig {
    pub daemon: OwnedDaemon,
    pub app: FixtureApp,
    pub browser: Browser,
    pub agent: McpClient,
    pub project: tempfile::TempDir,
}

impl FlowRig {
    /// The stack, the daemon started with `daemon_env`, the agent's proxy `<gate.reticle> mcp`.
    pub async fn start(gate: &GateEnv, daemon_env: &[(&str, &str)]) -> Result<Self, String> {
        let project = tempfile::tempdir().map_err(|e| e.to_string())?;
        let project_dir = project.path().to_string_lossy().to_string();
        let builder = OwnedDaemon::builder()
            .env(env::PROJECT_DIR, project_dir.clone())
            .env(env::ADVERTISE_ALL_TOOLS, "1");
        let PageStack {
            daemon,
            app,
            browser,
        } = PageStack::start(builder, daemon_env).await?;
        let options = ProxyOptions::new(daemon.port(), daemon.state_dir())
            .program(&gate.reticle)
            .env(env::PROJECT_DIR, project_dir)
            .env(env::ADVERTISE_ALL_TOOLS, "1");
        let agent = McpClient::start(options)
            .await
            .map_err(|e| format!("reticle mcp did not start: {e:?}"))?;
        Ok(Self {
            daemon,
            app,
            browser,
            agent,
            project,
        })
    }

    /// Opens the fixture app as `session` (with `extra` query switches); whether it connected.
    pub async fn open(&self, session: &str, extra: &str) -> Result<harness::Tab, String> {
        let url = self.app.url(&format!(
            "/?reticlePort={}&reticleToken={}&session={session}{extra}",
            self.daemon.port(),
            self.daemon.token()
        ));
        let tab = self.browser.open(&url).await.map_err(|e| e.to_string())?;
        session_listed(BOUND, session, async || {
            Some(self.call("reticle_sessions", json!({})).await)
        })
        .await
        .then_some(tab)
        .ok_or_else(|| format!("the page {session} did not connect within {BOUND:?}"))
    }

    /// A tool call's whole result, or `{"failure"}` in its place.
    pub async fn call(&self, tool: &str, args: Value) -> Value {
        self.agent
            .call_tool(tool, args)
            .await
            .unwrap_or_else(|e| json!({ "failure": format!("{e:?}") }))
    }

    /// The saved flow `name` as a reader of the file sees it (`null` when absent or unreadable).
    pub fn flow_file(&self, name: &str) -> Value {
        let path = self
            .project
            .path()
            .join(format!(".reticle/flows/{name}.json"));
        std::fs::read_to_string(path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or(Value::Null)
    }
}

/// The fixture's sign-in flow, its submit checked by `login.succeeded`.
pub(super) fn sign_in(name: &str) -> Value {
    json!({
        "name": name, "startPath": "/", "overwrite": true,
        "steps": [
            {"target": {"testid": "login-user"}, "action": "fill", "args": {"value": "ann"}},
            {"target": {"testid": "login-password"}, "action": "fill", "args": {"value": "pw"}},
            {"target": {"testid": "login-submit"}, "action": "click", "timeout_ms": 3000,
             "until": {"kind": "signal", "name": "login.succeeded"}}
        ]
    })
}

/// A flow of one click on the counter, checked by `until` (none: assertion-free).
pub(super) fn counter_click(name: &str, until: Option<Value>) -> Value {
    let mut step =
        json!({"target": {"testid": "counter-increment"}, "action": "click", "timeout_ms": 3000});
    if let Some(until) = until {
        step["until"] = until;
    }
    json!({"name": name, "startPath": "/", "overwrite": true, "steps": [step]})
}

pub(super) fn counter_changed() -> Value {
    json!({"kind": "signal", "name": "counter.changed"})
}

/// Saves `flow`; whether the daemon took it.
pub(super) async fn save(rig: &FlowRig, flow: Value) -> bool {
    rig.call("reticle_flow_save", flow).await["isError"] == false
}

/// The harness's observations named `f`, in order.
pub(super) fn harness_ops<'a>(ops: &'a [Op], f: &str) -> Vec<&'a Op> {
    ops.iter()
        .filter(|o| o.actor == Actor::Harness && o.f == f)
        .collect()
}

#[cfg(test)]
pub(super) mod test_history {
    //! The history every judge's unit test starts from: its control held, its fault established.
    use serde_json::json;

    use crate::history::History;
    use crate::scenarios::kit::control;

    pub(in crate::rows::flows) fn established() -> History {
        let history = History::new();
        control(&history, "positive control", true, json!({}));
        history.fault("f", true, json!({}));
        history
    }
}
