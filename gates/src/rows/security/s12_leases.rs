//! S12: lease honesty. Two real `reticle mcp` on one daemon: A leases the page's session, B acts
//! on it; the act must be refused naming A and the lease's expiry, else `silent`. Control: B's
//! read answers. Negative control: the stand-in daemon that ignores leases
//! ([`env::TEST_STAND_IN_IGNORE_LEASES`]), scored `silent`, and the judge's unit tests.

use std::time::Duration;

use harness::{McpClient, SdkRig};
use reticle::config::env;
use serde_json::{Value, json};

use crate::controls::StandIn;
use crate::history::{Actor, History, Op};
use crate::judge::{self, Judgement, RowOutcome};
use crate::rows::RowGate;
use crate::scenarios::kit::{control, controls_held, could_not_start, judged, observe, settle};
use crate::scenarios::{GateEnv, Ran, proxy_options};

/// The session the fixture page connects as.
const SESSION: &str = "leased-tab";

/// The fault: the session is leased by another agent.
const FAULT: &str = "session_leased_by_another_agent";

/// How long the page gets to connect.
const BOUND: Duration = Duration::from_secs(20);

/// S12 at its target: the second agent's act on a leased session is refused naming the holder.
pub async fn leased_session_refuses_other_agents(env: &GateEnv) -> Ran {
    run(env, &[]).await
}

/// S12's negative control: the daemon that records leases but admits everyone; it must score
/// `silent`.
pub async fn stand_in_ignores_leases() -> Ran {
    let real = GateEnv {
        reticle: harness::binaries::reticle(),
    };
    run(&real, &[(env::TEST_STAND_IN_IGNORE_LEASES, "1")]).await
}

async fn run(gate: &GateEnv, daemon_env: &[(&str, &str)]) -> Ran {
    let history = History::new();
    let rig = match SdkRig::launch_with(daemon_env).await {
        Ok(rig) => rig,
        Err(why) => return could_not_start(history, FAULT, &why),
    };
    let _tab = match rig.browser.open(&rig.fixture_url(SESSION)).await {
        Ok(tab) => tab,
        Err(why) => return could_not_start(history, FAULT, &why.to_string()),
    };
    let connected = rig.wait_session(SESSION, BOUND).await;
    control(
        &history,
        "the page connects as its session",
        connected,
        json!({ "session": SESSION }),
    );
    let agent = || McpClient::start(proxy_options(gate, rig.port(), rig.state_dir()));
    let (a, b) = match (agent().await, agent().await) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(why), _) | (_, Err(why)) => {
            return could_not_start(history, FAULT, &format!("reticle mcp: {why:?}"));
        }
    };
    let acquired = structured(
        a.call_tool(
            "reticle_run",
            json!({ "tool": "reticle_lease", "args": { "action": "acquire", "sessionId": SESSION } }),
        )
        .await,
    );
    let holder = acquired["lease"]["holder"]["agent"]
        .as_str()
        .map(str::to_string);
    history.fault(
        FAULT,
        holder.is_some(),
        json!({ "session": SESSION, "acquired": acquired }),
    );
    let read = b
        .call_tool(
            "reticle_query",
            json!({ "sessionId": SESSION, "testid": "counter-increment" }),
        )
        .await;
    control(
        &history,
        "the other agent reads the leased session",
        read.as_ref().is_ok_and(|r| r["isError"] != true),
        json!({ "read": read.as_ref().map_err(|e| format!("{e:?}")) }),
    );
    let act = json!({ "sessionId": SESSION, "target": { "testid": "counter-increment" }, "action": "click" });
    let answer = b
        .call_tool("reticle_act", act)
        .await
        .unwrap_or_else(|e| json!({ "failure": format!("{e:?}") }));
    observe(
        &history,
        "second_act",
        json!({ "holder": holder, "answer": answer }),
    );
    rig.browser.close().await;
    judged(history, judge_lease)
}

/// A tool call's structured content, or what stood in its place.
fn structured(answer: Result<Value, harness::McpFailure>) -> Value {
    match answer {
        Ok(result) => result["structuredContent"].clone(),
        Err(failure) => json!({ "failure": format!("{failure:?}") }),
    }
}

/// Whether `answer` (a whole tool result) is the refusal a leased session owes another agent:
/// an error result, structured, naming `holder` and when the lease expires. `Err` says how not.
pub fn refusal_names_the_holder(answer: &Value, holder: &str) -> Result<(), String> {
    if answer["isError"] != true {
        return Err(format!(
            "the second agent's act ran on a session another agent leased: {}",
            judge::one_line(&answer.to_string())
        ));
    }
    let refusal = &answer["structuredContent"];
    let reason = refusal["reason"].as_str().unwrap_or_default();
    let named = reason.contains(holder) && reason.contains("expires in");
    let block = refusal["lease"]["holder"]["agent"] == holder
        && refusal["lease"]["expiresInMs"].is_u64()
        && refusal["recovery"].as_str().is_some_and(|r| !r.is_empty());
    if !(named && block) {
        return Err(format!(
            "the refusal does not name the holder {holder} and the expiry: {}",
            judge::one_line(&refusal.to_string())
        ));
    }
    Ok(())
}

/// S12's judge: the second agent's act must be refused naming the holder and the expiry.
pub fn judge_lease(ops: &[Op]) -> Judgement {
    settle(|| {
        controls_held(ops)?;
        judge::established_fault(ops)?;
        let observed = ops
            .iter()
            .find(|o| o.actor == Actor::Harness && o.f == "second_act")
            .ok_or_else(|| {
                Judgement::new(RowOutcome::Inconclusive, "the second agent never acted")
            })?;
        let holder = observed.value["holder"].as_str().unwrap_or_default();
        Ok(
            match refusal_names_the_holder(&observed.value["answer"], holder) {
                Ok(()) => Judgement::new(
                    RowOutcome::Surfaced,
                    format!(
                        "the second agent's act was refused naming the holder {holder} and the expiry"
                    ),
                ),
                Err(why) => Judgement::new(RowOutcome::Silent, why),
            },
        )
    })
}

/// S12 in the row table.
pub const S12: RowGate = RowGate {
    id: "S12",
    file: file!(),
    scenario: |env| Box::pin(leased_session_refuses_other_agents(env)),
    judge: judge_lease,
    controls: &[StandIn::DaemonIgnoresLeases],
};

#[cfg(test)]
mod tests {
    //! Negative control: the history of a daemon without leases (the second act ran) and of a
    //! refusal that names no holder score `silent`; the named refusal `surfaced`.
    use super::*;

    fn history(answer: Value) -> Vec<Op> {
        let history = History::new();
        control(&history, "the page connects", true, json!({}));
        history.fault(FAULT, true, json!({}));
        observe(
            &history,
            "second_act",
            json!({ "holder": "a1", "answer": answer }),
        );
        history.ops()
    }

    #[test]
    fn an_act_that_ran_or_a_refusal_naming_no_holder_is_silent() {
        let ran = history(json!({ "isError": false, "structuredContent": { "actionId": "a1" } }));
        assert_eq!(judge_lease(&ran).outcome, RowOutcome::Silent);
        let anonymous = history(json!({ "isError": true, "structuredContent": {
            "ok": false, "reason": "busy", "recovery": "try later" } }));
        assert_eq!(judge_lease(&anonymous).outcome, RowOutcome::Silent);
        let named = history(json!({ "isError": true, "structuredContent": {
            "ok": false, "reason": "session s is leased by agent a1, which expires in 300000 ms",
            "recovery": "wait", "lease": { "holder": { "agent": "a1" }, "expiresInMs": 300000 } } }));
        assert_eq!(judge_lease(&named).outcome, RowOutcome::Surfaced);
    }
}
