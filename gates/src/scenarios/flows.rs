//! The flow rows F1 to F3, through the real stack: an owned daemon serving a private project
//! (`RETICLE_PROJECT_DIR`, a tempdir), the fixture app in Chromium (its `variant=` switches,
//! apps/e2e/API.md), and an agent's `reticle mcp` that saves, replays and heals flows.
//! - F1, heal never guesses: a sign-in flow healed with `apply: true` on the `twin` page (two
//!   buttons as likely) and on the `broken` page (the renamed button no longer submits) writes no
//!   new flow version; on the `renamed` page it does (control: heal can heal).
//! - F2, assertion-free never yes: a flow whose step says nothing must follow, replayed and
//!   verified, never answers `yes` and says why (control: the same click checked by its signal
//!   answers `yes`).
//! - F3, stale never replayed: a flow replayed twice (each replay reloads the page, so every ref
//!   of the first is stale by the second) acts on the right element both times, and a capsule
//!   holding only a ref is refused naming it.
//!
//! Each row's negative control runs the same scenario and judge against a daemon started with
//! the row's stand-in switch ([`stand_in`]); it must score `silent`.

use std::time::Duration;

use harness::{Browser, FixtureApp, McpClient, OwnedDaemon, ProxyOptions};
use serde_json::{Value, json};

use super::kit::{control, controls_held, could_not_start, judged, observe, settle};
use super::page::{PageStack, session_listed};
use super::{GateEnv, Ran};
use crate::history::{Actor, History, Op};
use crate::judge::{self, Judgement, RowOutcome};
use reticle::config::env;

/// How long a page gets to connect.
const BOUND: Duration = Duration::from_secs(30);
/// The variable the sign-in flow's password is read from at replay.
const PASSWORD_ENV: &str = "RETICLE_SECRET_LOGIN_PASSWORD";

/// The stand-in switch each row's negative control starts its daemon with.
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
        "F1" => heal(&real, &daemon_env).await,
        "F2" => assertion_free(&real, &daemon_env).await,
        _ => stale_refs(&real, &daemon_env).await,
    }
}

/// F1 at its target.
pub async fn heal_never_guesses(env: &GateEnv) -> Ran {
    heal(env, &[]).await
}

/// F2 at its target.
pub async fn assertion_free_never_yes(env: &GateEnv) -> Ran {
    assertion_free(env, &[]).await
}

/// F3 at its target.
pub async fn stale_never_replayed(env: &GateEnv) -> Ran {
    stale_refs(env, &[]).await
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
fn sign_in(name: &str) -> Value {
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
fn counter_click(name: &str, until: Option<Value>) -> Value {
    let mut step =
        json!({"target": {"testid": "counter-increment"}, "action": "click", "timeout_ms": 3000});
    if let Some(until) = until {
        step["until"] = until;
    }
    json!({"name": name, "startPath": "/", "overwrite": true, "steps": [step]})
}

fn counter_changed() -> Value {
    json!({"kind": "signal", "name": "counter.changed"})
}

/// Saves `flow`; whether the daemon took it.
async fn save(rig: &FlowRig, flow: Value) -> bool {
    rig.call("reticle_flow_save", flow).await["isError"] == false
}

async fn heal(gate: &GateEnv, daemon_env: &[(&str, &str)]) -> Ran {
    const FAULT: &str = "heal_has_no_proof";
    let history = History::new();
    let rig = match FlowRig::start(gate, daemon_env).await {
        Ok(rig) => rig,
        Err(why) => return could_not_start(history, FAULT, &why),
    };
    let mut tabs = Vec::new();
    let mut opened = true;
    for variant in ["renamed", "twin", "broken"] {
        match rig.open(variant, &format!("&variant={variant}")).await {
            Ok(tab) => tabs.push(tab),
            Err(_) => opened = false,
        }
        opened &= save(&rig, sign_in(&format!("sign-in-{variant}"))).await;
    }
    history.fault(
        FAULT,
        opened,
        json!({ "pages": ["renamed", "twin", "broken"] }),
    );
    for variant in ["renamed", "twin", "broken"] {
        let name = format!("sign-in-{variant}");
        let before = rig.flow_file(&name);
        let answer = rig
            .call(
                "reticle_flow_heal",
                json!({"sessionId": variant, "name": name, "apply": true,
                       "secrets": { PASSWORD_ENV: "pw" }}),
            )
            .await;
        let after = rig.flow_file(&name);
        let written = after != before;
        if variant == "renamed" {
            control(
                &history,
                "heal rebinds the renamed button and writes version 2",
                written && after["version"] == 2,
                json!({ "answer": answer["structuredContent"] }),
            );
        } else {
            observe(
                &history,
                "heal",
                json!({ "variant": variant, "written": written, "version": after["version"],
                        "answer": answer["structuredContent"] }),
            );
        }
    }
    rig.browser.close().await;
    judged(history, judge_heal)
}

/// F1's judge: on a page where heal has no proof (ambiguous, or the consequence broke), an
/// applied heal writes nothing and says why.
pub fn judge_heal(ops: &[Op]) -> Judgement {
    settle(|| {
        controls_held(ops)?;
        judge::established_fault(ops)?;
        let heals: Vec<&Op> = harness_ops(ops, "heal");
        if heals.len() < 2 {
            return Err(Judgement::new(
                RowOutcome::Inconclusive,
                "heal did not run on both pages without proof",
            ));
        }
        for heal in &heals {
            let v = &heal.value;
            if v["written"] != false {
                return Ok(Judgement::new(
                    RowOutcome::Silent,
                    format!(
                        "heal with apply:true wrote version {} of the flow on the {} page, where no consequence proved the new target: {}",
                        v["version"],
                        v["variant"].as_str().unwrap_or("?"),
                        judge::one_line(&v["answer"].to_string())
                    ),
                ));
            }
            if !v["answer"]["because"].is_string() || v["answer"]["applied"] != false {
                return Ok(Judgement::new(
                    RowOutcome::Silent,
                    format!(
                        "heal on the {} page did not say why it applied nothing: {}",
                        v["variant"].as_str().unwrap_or("?"),
                        judge::one_line(&v["answer"].to_string())
                    ),
                ));
            }
        }
        Ok(Judgement::new(
            RowOutcome::Surfaced,
            "heal with apply:true wrote nothing on the twin and broken pages and said why (the renamed page healed)",
        ))
    })
}

async fn assertion_free(gate: &GateEnv, daemon_env: &[(&str, &str)]) -> Ran {
    const FAULT: &str = "flow_checks_nothing";
    let history = History::new();
    let rig = match FlowRig::start(gate, daemon_env).await {
        Ok(rig) => rig,
        Err(why) => return could_not_start(history, FAULT, &why),
    };
    let tab = rig.open("plain", "").await;
    let saved = tab.is_ok()
        && save(&rig, counter_click("free", None)).await
        && save(&rig, counter_click("checked", Some(counter_changed()))).await;
    let graded = rig
        .call("reticle_flow", json!({"action": "load", "name": "free"}))
        .await;
    history.fault(
        FAULT,
        saved,
        json!({ "loaded": graded["structuredContent"] }),
    );
    let checked = rig
        .call(
            "reticle_flow_replay",
            json!({"sessionId": "plain", "name": "checked"}),
        )
        .await;
    control(
        &history,
        "the same click checked by its signal replays yes",
        checked["structuredContent"]["verified"] == "yes",
        json!({ "answer": checked["structuredContent"] }),
    );
    let replayed = rig
        .call(
            "reticle_flow_replay",
            json!({"sessionId": "plain", "name": "free"}),
        )
        .await;
    observe(
        &history,
        "answer",
        json!({ "tool": "reticle_flow_replay", "verified": replayed["structuredContent"]["verified"],
                "because": replayed["structuredContent"]["because"] }),
    );
    let verified = rig
        .call(
            "reticle_verify",
            json!({"sessionId": "plain", "action": "flows", "flows": ["free"]}),
        )
        .await;
    observe(
        &history,
        "answer",
        json!({ "tool": "reticle_verify", "verified": verified["structuredContent"]["verified"],
                "because": verified["structuredContent"]["because"] }),
    );
    rig.browser.close().await;
    judged(history, judge_assertion_free)
}

/// F2's judge: the assertion-free flow's replay and verify never answer `yes`, and say why.
pub fn judge_assertion_free(ops: &[Op]) -> Judgement {
    settle(|| {
        controls_held(ops)?;
        judge::established_fault(ops)?;
        let answers = harness_ops(ops, "answer");
        if answers.len() < 2 {
            return Err(Judgement::new(
                RowOutcome::Inconclusive,
                "the flow was not both replayed and verified",
            ));
        }
        for answer in &answers {
            let v = &answer.value;
            let tool = v["tool"].as_str().unwrap_or("?");
            if v["verified"] == "yes" {
                return Ok(Judgement::new(
                    RowOutcome::Silent,
                    format!("{tool} answered yes for a flow that checks nothing"),
                ));
            }
            if v["because"].as_str().is_none_or(|b| b.is_empty()) {
                return Ok(Judgement::new(
                    RowOutcome::Silent,
                    format!(
                        "{tool} answered {} for an assertion-free flow without saying why",
                        v["verified"]
                    ),
                ));
            }
        }
        Ok(Judgement::new(
            RowOutcome::Surfaced,
            format!(
                "replay and verify of an assertion-free flow answered {} and said why",
                answers[0].value["verified"]
            ),
        ))
    })
}

async fn stale_refs(gate: &GateEnv, daemon_env: &[(&str, &str)]) -> Ran {
    const FAULT: &str = "refs_went_stale";
    let history = History::new();
    let rig = match FlowRig::start(gate, daemon_env).await {
        Ok(rig) => rig,
        Err(why) => return could_not_start(history, FAULT, &why),
    };
    let tab = rig.open("plain", "").await;
    let saved = tab.is_ok() && save(&rig, counter_click("bump", Some(counter_changed()))).await;
    let first = rig
        .call(
            "reticle_flow_replay",
            json!({"sessionId": "plain", "name": "bump"}),
        )
        .await;
    control(
        &history,
        "the flow replays yes on a fresh page",
        first["structuredContent"]["verified"] == "yes",
        json!({ "answer": first["structuredContent"] }),
    );
    // A ref the agent saved now; the second replay reloads the page, so it and every ref the
    // first replay resolved are stale by then.
    let found = rig
        .call(
            "reticle_query",
            json!({"sessionId": "plain", "testid": "counter-increment"}),
        )
        .await;
    let stale_ref = found["structuredContent"]["elements"][0]["ref"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    history.fault(
        FAULT,
        saved && !stale_ref.is_empty(),
        json!({ "how": "the replay reloads the page at its start path", "ref": stale_ref }),
    );
    let second = rig
        .call(
            "reticle_flow_replay",
            json!({"sessionId": "plain", "name": "bump"}),
        )
        .await;
    observe(
        &history,
        "replay",
        json!({ "verified": second["structuredContent"]["verified"],
                "answer": second["structuredContent"] }),
    );
    let capsule = capsule_of_a_ref(&rig, &stale_ref);
    let refused = rig
        .call(
            "reticle_replay",
            json!({"sessionId": "plain", "capsule": capsule}),
        )
        .await;
    observe(
        &history,
        "capsule",
        json!({ "ref": stale_ref, "answer": refused }),
    );
    rig.browser.close().await;
    judged(history, judge_stale_refs)
}

/// Writes a capsule whose act names its element by `element_ref` only; its name.
fn capsule_of_a_ref(rig: &FlowRig, element_ref: &str) -> String {
    let dir = rig.project.path().join(".reticle/capsules");
    let capsule = json!({
        "format": 1, "tool": "reticle_act_and_wait", "sessionId": "plain",
        "arguments": {"ref": element_ref, "action": "click",
                      "until": {"kind": "signal", "name": "counter.changed"}},
        "verdict": {"verified": "no"}, "events": []
    });
    let _ = std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(dir.join("by-ref.json"), capsule.to_string()));
    "by-ref".into()
}

/// F3's judge: the replay after the reload acted on the right element (`yes`), and the capsule
/// holding only a ref was refused naming it.
pub fn judge_stale_refs(ops: &[Op]) -> Judgement {
    settle(|| {
        controls_held(ops)?;
        judge::established_fault(ops)?;
        let replay = harness_ops(ops, "replay");
        let capsule = harness_ops(ops, "capsule");
        let (Some(replay), Some(capsule)) = (replay.first(), capsule.first()) else {
            return Err(Judgement::new(
                RowOutcome::Inconclusive,
                "the flow was not replayed after the reload, or the capsule not replayed",
            ));
        };
        if replay.value["verified"] != "yes" {
            return Ok(Judgement::new(
                RowOutcome::Silent,
                format!(
                    "after the page reloaded the replay did not act on the step's element: {}",
                    judge::one_line(&replay.value["answer"].to_string())
                ),
            ));
        }
        let answer = &capsule.value["answer"];
        let stale_ref = capsule.value["ref"].as_str().unwrap_or("?");
        let named = answer["structuredContent"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains(stale_ref));
        if answer["isError"] != true || !named {
            return Ok(Judgement::new(
                RowOutcome::Silent,
                format!(
                    "a capsule holding only the ref {stale_ref} was not refused naming it: {}",
                    judge::one_line(&answer.to_string())
                ),
            ));
        }
        Ok(Judgement::new(
            RowOutcome::Surfaced,
            format!(
                "the replay after the reload resolved its target afresh and passed; a capsule holding only {stale_ref} was refused naming it"
            ),
        ))
    })
}

/// The harness's observations named `f`, in order.
fn harness_ops<'a>(ops: &'a [Op], f: &str) -> Vec<&'a Op> {
    ops.iter()
        .filter(|o| o.actor == Actor::Harness && o.f == f)
        .collect()
}

#[cfg(test)]
mod tests {
    //! Negative controls of the judges: a written heal, a `yes` for an assertion-free flow and
    //! a replay that failed after the reload each score `silent`.
    use super::*;

    fn established() -> History {
        let history = History::new();
        control(&history, "positive control", true, json!({}));
        history.fault("f", true, json!({}));
        history
    }

    #[test]
    fn a_heal_that_wrote_without_proof_is_silent() {
        let history = established();
        for (variant, written) in [("twin", false), ("broken", true)] {
            observe(
                &history,
                "heal",
                json!({"variant": variant, "written": written, "version": 2,
                       "answer": {"applied": written, "because": "x"}}),
            );
        }
        assert_eq!(judge_heal(&history.ops()).outcome, RowOutcome::Silent);
    }

    #[test]
    fn a_yes_for_an_assertion_free_flow_is_silent() {
        let history = established();
        observe(
            &history,
            "answer",
            json!({"tool": "reticle_flow_replay", "verified": "unknown", "because": "assertion-free"}),
        );
        observe(
            &history,
            "answer",
            json!({"tool": "reticle_verify", "verified": "yes", "because": "all passed"}),
        );
        assert_eq!(
            judge_assertion_free(&history.ops()).outcome,
            RowOutcome::Silent
        );
    }

    #[test]
    fn a_replay_that_missed_after_the_reload_is_silent() {
        let history = established();
        observe(
            &history,
            "replay",
            json!({"verified": "unknown", "answer": {}}),
        );
        observe(
            &history,
            "capsule",
            json!({"ref": "e3", "answer": {"isError": true, "structuredContent": {"reason": "e3 is a ref"}}}),
        );
        assert_eq!(judge_stale_refs(&history.ops()).outcome, RowOutcome::Silent);
    }
}
