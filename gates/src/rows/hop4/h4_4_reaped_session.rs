//! H4.4: the reaper marks a quiet session idle; the next command revives it and is answered, or
//! says why. Its scenario and judge.

use harness::wire_page::echo_responder;
use harness::{BridgeClient, OwnedDaemon, WirePage, poll};
use serde_json::{Value, json};

use super::{ORIGIN, command_answer, daemon_stopped_answering};
use crate::fault;
use crate::history::{History, Op, OpType};
use crate::judge::{Judgement, RowOutcome};
use crate::rows::RowGate;
use crate::scenarios::kit::{BOUND, control, could_not_start, judged, settle};
use crate::scenarios::{GateEnv, Ran, traced};
use crate::scenarios::{kit, page_kit};

/// H4.4: the reaper marks a quiet session idle (bound 300 ms); the next command must revive it
/// and be answered, or say why. Control: under the default bound a fresh session is not idle and
/// its command revives nothing (so `idle` and `revived` are not always on).
pub async fn reaped_session_is_revived(env: &GateEnv) -> Ran {
    let history = History::new();
    let (daemon, token) = match kit::daemon(
        traced::builder().env(reticle::config::env::SESSION_IDLE_MS, "300"),
    )
    .await
    {
        Ok(started) => started,
        Err(why) => return could_not_start(history, fault::IDLE_PAST_REAPER_BOUND, &why),
    };
    let client = BridgeClient::new(daemon.port());
    let page = match WirePage::open_with(daemon.port(), ORIGIN, Some(echo_responder())).await {
        Ok(page) => page,
        Err(err) => {
            return could_not_start(history, fault::IDLE_PAST_REAPER_BOUND, &err.to_string());
        }
    };
    page.hello("quiet", Some(&token)).await;
    page_kit::session_appears(&history, &client, "quiet", BOUND).await;
    let idle = poll::within(BOUND, async || match client.try_session("quiet").await {
        Ok(Some(entry)) if entry["idle"] == true => Some(entry),
        _ => None,
    })
    .await;
    history.fault(
        fault::IDLE_PAST_REAPER_BOUND,
        idle.is_some(),
        json!({ "boundMs": 300, "session": idle }),
    );
    page_kit::query_buttons(&history, &client, "quiet").await;

    let (patient, patient_token) = match kit::daemon(OwnedDaemon::builder()).await {
        Ok(started) => started,
        Err(why) => {
            control(
                &history,
                "a fresh session under the default bound",
                false,
                json!({ "message": why }),
            );
            return judged(history, judge_reaper);
        }
    };
    let patient_client = BridgeClient::new(patient.port());
    let held = match WirePage::open_with(patient.port(), ORIGIN, Some(echo_responder())).await {
        Ok(busy) => {
            busy.hello("busy", Some(&patient_token)).await;
            let seen = poll::within(BOUND, async || {
                patient_client.try_session("busy").await.ok().flatten()
            })
            .await;
            let answer = patient_client
                .try_command(Some("busy"), "query", json!({}), None)
                .await
                .unwrap_or(Value::Null);
            let held = seen.as_ref().is_some_and(|s| s["idle"] == false)
                && answer["outcome"] == "answered"
                && answer["revived"] == false;
            (held, json!({ "session": seen, "answer": answer }))
        }
        Err(err) => (false, json!({ "message": err.to_string() })),
    };
    control(
        &history,
        "a fresh session under the default bound is not idle and revives nothing",
        held.0,
        held.1,
    );
    drop(page);
    traced::call_then_check_trace(env, &history, &daemon).await;
    judged(history, judge_reaper)
}

/// Judges H4.4's history.
pub fn judge_reaper(ops: &[Op]) -> Judgement {
    settle(|| {
        let (done, said) = command_answer(
            ops,
            fault::IDLE_PAST_REAPER_BOUND,
            "the command to the reaped session was never answered",
        )?;
        let v = &done.value;
        Ok(match done.op_type {
            OpType::Ok => Judgement::new(
                RowOutcome::Survived,
                format!(
                    "the next command revived the reaped session and was answered (revived: {})",
                    v["revived"]
                ),
            ),
            OpType::Fail if said.contains("idle") || said.contains("reap") => {
                Judgement::new(RowOutcome::Surfaced, format!("refused naming it: {said}"))
            }
            OpType::Info if v["outcome"].is_null() => return Err(daemon_stopped_answering(&said)),
            _ => Judgement::new(
                RowOutcome::Silent,
                format!("the command to the reaped session: {} {said}", v["outcome"]),
            ),
        })
    })
}

/// H4.4 in the row table.
pub const H4_4: RowGate = RowGate {
    id: "H4.4",
    file: file!(),
    scenario: |env| Box::pin(reaped_session_is_revived(env)),
    judge: judge_reaper,
    controls: &[],
};
