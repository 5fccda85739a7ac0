//! S6: a capsule written after an agent typed a password holds no secret and is readable only
//! by its owner. Its page, scenario, judge and the judge's unit test.

use harness::wire_page::{Responder, WirePage};
use harness::{McpClient, OwnedDaemon, ProxyOptions, poll};
use reticle::config::env;
use serde_json::json;

use super::{BOUND, mode_of, observed};
use crate::history::{History, Op, OpType};
use crate::judge::{self, Judgement, RowOutcome};
use crate::rows::RowGate;
use crate::scenarios::kit::{could_not_start, judged, observe, settle};
use crate::scenarios::{GateEnv, Ran};

const TYPED_SECRET: &str = "hunter2-typed-secret";

/// A page that finds one password field and acts on it.
fn password_page() -> Responder {
    std::sync::Arc::new(
        |command: &reticle::wire::Command| match command.name.as_str() {
            "query" => Some((
                true,
                json!({ "count": 1, "elements": [{ "ref": "e1", "role": "textbox", "name": "Password" }] }),
            )),
            _ => Some((true, json!({ "dispatched": true }))),
        },
    )
}

/// S6: an agent fills a password field and the verdict is red, so a capsule is written: it must
/// not hold the typed secret and must be readable only by its owner.
pub async fn capsules_hold_no_secrets(env: &GateEnv) -> Ran {
    const FAULT: &str = "password_typed_into_a_red_action";
    let history = History::new();
    let Ok(project) = tempfile::tempdir() else {
        return could_not_start(history, FAULT, "no temporary dir");
    };
    let builder = OwnedDaemon::builder().env(
        env::PROJECT_DIR,
        project.path().to_string_lossy().to_string(),
    );
    let (daemon, token) = match super::kit::daemon(builder).await {
        Ok(started) => started,
        Err(why) => return could_not_start(history, FAULT, &why),
    };
    let page = match WirePage::open_with(daemon.port(), None, Some(password_page())).await {
        Ok(page) => page,
        Err(why) => return could_not_start(history, FAULT, &why.to_string()),
    };
    page.hello("s6-page", Some(&token)).await;
    let options = ProxyOptions::new(daemon.port(), daemon.state_dir()).program(&env.reticle);
    let client = match McpClient::start(options).await {
        Ok(client) => client,
        Err(why) => return could_not_start(history, FAULT, &format!("{why:?}")),
    };
    let arguments = json!({
        "target": { "label": "Password" }, "action": "fill", "args": { "value": TYPED_SECRET },
        "until": { "kind": "signal", "name": "never.sent" }, "timeout_ms": 300,
    });
    history.fault(FAULT, true, json!({ "typed": TYPED_SECRET }));
    history.invoke("act_and_wait", arguments.clone());
    let answer = poll::within(BOUND, async || {
        let envelope = client
            .call_tool("reticle_act_and_wait", arguments.clone())
            .await
            .ok()?;
        Some(
            envelope
                .get("structuredContent")
                .cloned()
                .unwrap_or(envelope),
        )
    })
    .await;
    let (op, value) = match &answer {
        Some(value) if value["capsuleSaved"].is_string() => (OpType::Ok, value.clone()),
        Some(value) => (OpType::Fail, value.clone()),
        None => (
            OpType::Info,
            json!({ "message": "no answer within the bound" }),
        ),
    };
    history.complete(op, "act_and_wait", value.clone());
    let capsule = value["capsuleSaved"]
        .as_str()
        .map(|name| project.path().join(name));
    let text = capsule
        .as_deref()
        .and_then(|p| std::fs::read_to_string(p).ok());
    observe(
        &history,
        "capsule",
        json!({
            "written": text.is_some(),
            "holdsSecret": text.as_deref().is_some_and(|t| t.contains(TYPED_SECRET)),
            "mode": capsule.as_deref().and_then(mode_of),
        }),
    );
    client.close().await;
    page.close().await;
    daemon.shutdown().await;
    judged(history, judge_capsule)
}

/// S6's judge: a capsule holding the typed secret, or readable by others, is silent.
pub fn judge_capsule(ops: &[Op]) -> Judgement {
    settle(|| {
        judge::established_fault(ops)?;
        let Some(capsule) = observed(ops, "capsule").first().map(|o| o.value.clone()) else {
            return Err(Judgement::new(
                RowOutcome::Inconclusive,
                "the capsule was not observed",
            ));
        };
        if capsule["written"] != true {
            return Err(Judgement::new(
                RowOutcome::Inconclusive,
                "the red action wrote no capsule",
            ));
        }
        if capsule["holdsSecret"] == true {
            return Ok(Judgement::new(
                RowOutcome::Silent,
                "the capsule holds the password the agent typed",
            ));
        }
        if capsule["mode"].as_u64().is_none_or(|m| m & 0o077 != 0) {
            return Ok(Judgement::new(
                RowOutcome::Silent,
                format!(
                    "the capsule is readable by others (mode {:o})",
                    capsule["mode"].as_u64().unwrap_or(0)
                ),
            ));
        }
        Ok(judge::must_survive(ops, "act_and_wait"))
    })
}

/// S6 in the row table.
pub const S6: RowGate = RowGate {
    id: "S6",
    file: file!(),
    scenario: |env| Box::pin(capsules_hold_no_secrets(env)),
    judge: judge_capsule,
    controls: &[],
};

#[cfg(test)]
mod tests {
    //! Negative controls: each judge fed the history the old behaviour produced scores `silent`,
    //! and fed the fixed behaviour's history scores its target.
    use super::*;
    use crate::rows::security::test_history::fault;

    #[test]
    fn a_capsule_holding_the_password_is_silent() {
        let old = History::new();
        fault(&old, "password_typed_into_a_red_action", json!({}));
        old.invoke("act_and_wait", json!({}));
        old.complete(OpType::Ok, "act_and_wait", json!({ "capsuleSaved": "x" }));
        observe(
            &old,
            "capsule",
            json!({ "written": true, "holdsSecret": true, "mode": 0o644 }),
        );
        assert_eq!(judge_capsule(&old.ops()).outcome, RowOutcome::Silent);
    }
}
