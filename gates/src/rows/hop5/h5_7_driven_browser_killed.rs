//! H5.7: the browser Reticle drives SIGKILLed while a call waits on its tab: the call is answered
//! `observation_lost` (unknown, never a verdict on the app), and the next call on that session
//! launches the browser again, says so and answers from the page. Its scenario and judge.

use std::time::Duration;

use harness::poll;
use serde_json::{Value, json};

use super::driven::{DrivenRig, UNWIRED};
use crate::fault;
use crate::history::{History, Op, OpType};
use crate::judge::{Judgement, RowOutcome, one_line, text};
use crate::rows::RowGate;
use crate::scenarios::fault_segments::first_segment;
use crate::scenarios::kit::{BOUND, control, could_not_start, judged, settle};
use crate::scenarios::{GateEnv, Ran};

/// The call that waits on the tab as its browser dies.
const IN_FLIGHT: &str = "in_flight";
/// The call after the death.
const NEXT: &str = "next_call";

/// H5.7's scenario.
pub async fn driven_browser_killed_mid_call(env: &GateEnv) -> Ran {
    let history = History::new();
    let fault = fault::KILL_DRIVEN_BROWSER;
    let rig = match DrivenRig::start(env, &[]).await {
        Ok(rig) => rig,
        Err(why) => return could_not_start(history, fault, &why),
    };
    rig.app.page("/unwired.html", UNWIRED);
    let Some(session) = rig
        .launch(&history, "launch", "/unwired.html", "127.0.0.1")
        .await
    else {
        return could_not_start(history, fault, "the driven tab did not open");
    };
    let (op, answer) = rig
        .call(
            &history,
            "query",
            "reticle_query",
            json!({"sessionId": session, "by": "testid", "value": "add"}),
        )
        .await;
    control(
        &history,
        "the driven tab answers a query",
        op == OpType::Ok,
        answer,
    );
    let Some(chromium) = harness::driven::chromium(rig.tmp.path()) else {
        return could_not_start(
            history,
            fault,
            "the driven Chromium was not found by its profile",
        );
    };
    let waiting = {
        let (history, client, session) = (history.clone(), rig.client.clone(), session.clone());
        tokio::spawn(async move {
            let args = json!({"sessionId": session, "predicate": {"kind": "text", "contains": "never shown"}, "timeout_ms": 15000});
            history.invoke(
                IN_FLIGHT,
                json!({ "tool": "reticle_wait_for", "arguments": args }),
            );
            let answer = tokio::time::timeout(
                Duration::from_secs(30),
                client.call_tool("reticle_wait_for", args),
            )
            .await;
            let (op, value) = match answer {
                Ok(Ok(result)) => {
                    harness::mcp_client::completion_of_result(json!(IN_FLIGHT), &result)
                }
                Ok(Err(failure)) => (OpType::Info, json!({ "message": failure.message() })),
                Err(_) => (OpType::Info, json!({ "message": "no answer within 30 s" })),
            };
            history.complete(op, IN_FLIGHT, value);
        })
    };
    // The overlap, from the daemon itself: the call is running there when the browser dies.
    let in_flight = poll::within(BOUND, async || {
        let status = rig.daemon.status().await?;
        (status.calls_in_flight >= 1).then_some(status.calls_in_flight)
    })
    .await;
    let killed = in_flight.is_some()
        && nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(chromium as i32),
            nix::sys::signal::Signal::SIGKILL,
        )
        .is_ok();
    history.fault(
        fault,
        killed,
        json!({ "chromium": chromium, "callsInFlightAtTheDaemon": in_flight }),
    );
    let _ = waiting.await;
    rig.call(
        &history,
        NEXT,
        "reticle_query",
        json!({"sessionId": session, "by": "testid", "value": "add"}),
    )
    .await;
    judged(history, judge_killed_browser)
}

/// Judges H5.7's history: surfaced when the call in flight ended `observation_lost` after the
/// kill and the next call says it relaunched and found the element; silent when the in-flight
/// call gave a verdict (pass or fail) or hung, or the next call did not come back.
pub fn judge_killed_browser(ops: &[Op]) -> Judgement {
    settle(|| {
        let segment = first_segment(ops, fault::KILL_DRIVEN_BROWSER)?;
        let Some(done) = segment.completion(IN_FLIGHT) else {
            return Ok(Judgement::new(
                RowOutcome::Inconclusive,
                "the call in flight answered before the browser was killed: no overlap",
            ));
        };
        let answer = &done.value["result"]["structuredContent"];
        let lost =
            answer["evaluation"]["observationLost"] == true || answer["observationLost"] == true;
        if done.op_type == OpType::Info {
            return Ok(Judgement::new(
                RowOutcome::Silent,
                format!(
                    "the call in flight hung on the dead browser: {}",
                    one_line(&text(&done.value))
                ),
            ));
        }
        if !lost || matches!(answer["status"].as_str(), Some("pass" | "fail")) {
            return Ok(Judgement::new(
                RowOutcome::Silent,
                format!(
                    "the call in flight gave a verdict on a dead page: {}",
                    one_line(&text(answer))
                ),
            ));
        }
        let next = segment.completion(NEXT);
        let next_answer: &Value = next
            .map(|o| &o.value["result"]["structuredContent"])
            .unwrap_or(&Value::Null);
        let found = next_answer["elements"]
            .as_array()
            .is_some_and(|e| e.len() == 1);
        let said = next_answer["relaunched"].as_str().is_some();
        Ok(match (next.map(|o| o.op_type), found, said) {
            (Some(OpType::Ok), true, true) => Judgement::new(
                RowOutcome::Surfaced,
                format!(
                    "the call in flight: observation_lost ({}); the next call relaunched the browser and said so",
                    one_line(answer["evaluation"]["evidence"].as_str().unwrap_or("?"))
                ),
            ),
            (Some(OpType::Ok), true, false) => Judgement::new(
                RowOutcome::Silent,
                "the next call answered from a new browser without saying it was relaunched",
            ),
            _ => Judgement::new(
                RowOutcome::Silent,
                format!(
                    "the next call did not bring the browser back: {}",
                    one_line(&text(next_answer))
                ),
            ),
        })
    })
}

/// H5.7 in the row table.
pub const H5_7: RowGate = RowGate {
    id: "H5.7",
    file: file!(),
    scenario: |env| Box::pin(driven_browser_killed_mid_call(env)),
    judge: judge_killed_browser,
    controls: &[],
};

#[cfg(test)]
mod tests {
    use super::*;

    fn killed(in_flight: Option<(OpType, Value)>, next: Value) -> Vec<Op> {
        let h = History::new();
        control(&h, "the driven tab answers a query", true, json!({}));
        h.invoke(IN_FLIGHT, json!({}));
        h.fault(fault::KILL_DRIVEN_BROWSER, true, json!({}));
        if let Some((op, value)) = in_flight {
            h.complete(
                op,
                IN_FLIGHT,
                json!({ "result": { "structuredContent": value } }),
            );
        }
        h.invoke(NEXT, json!({}));
        h.complete(
            OpType::Ok,
            NEXT,
            json!({ "result": { "structuredContent": next } }),
        );
        h.ops()
    }

    #[test]
    fn only_observation_lost_then_a_said_relaunch_is_surfaced() {
        let lost = json!({"status": "unknown", "evaluation": {"observationLost": true, "evidence": "the page went away"}});
        let back = json!({"elements": [{"ref": "e1"}], "relaunched": "launched it again"});
        assert_eq!(
            judge_killed_browser(&killed(Some((OpType::Ok, lost.clone())), back.clone())).outcome,
            RowOutcome::Surfaced
        );
        // A stand-in that answers the dead page's wait as a verdict is caught.
        let verdict = json!({"status": "fail", "evaluation": {"observationLost": false}});
        assert_eq!(
            judge_killed_browser(&killed(Some((OpType::Ok, verdict)), back.clone())).outcome,
            RowOutcome::Silent
        );
        // One that brings the browser back without saying so is caught.
        let quiet = json!({"elements": [{"ref": "e1"}]});
        assert_eq!(
            judge_killed_browser(&killed(Some((OpType::Ok, lost.clone())), quiet)).outcome,
            RowOutcome::Silent
        );
        // A hang is silent; no overlap is inconclusive.
        assert_eq!(
            judge_killed_browser(&killed(Some((OpType::Info, json!({}))), back.clone())).outcome,
            RowOutcome::Silent
        );
        assert_eq!(
            judge_killed_browser(&killed(None, back)).outcome,
            RowOutcome::Inconclusive
        );
    }
}
