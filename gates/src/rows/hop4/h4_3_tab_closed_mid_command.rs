//! H4.3: a tab closed with a command pending: the command is answered `observation_lost`, never
//! blamed on the app. Its scenario, the stand-in page its control runs, its judge and the unit
//! test of that judge.

use std::time::Duration;

use harness::wire_page::Responder;
use harness::{BridgeClient, OwnedDaemon, SdkRig, WirePage, poll};
use serde_json::{Value, json};

use super::{ORIGIN, command_answer, daemon_stopped_answering};
use crate::controls::StandIn;
use crate::fault;
use crate::history::{History, Op, OpType};
use crate::judge::{Judgement, RowOutcome};
use crate::rows::RowGate;
use crate::scenarios::kit::{BOUND, control, could_not_start, judged, settle};
use crate::scenarios::{GateEnv, Ran, traced};
use crate::scenarios::{kit, page_kit};

/// Sends `snapshot` to `session`, waits until the daemon shows it pending, then runs `lose` (the
/// page goes away) and records the fault and how the command ended. Shared by the real scenario
/// (a Chromium tab closed) and the negative control (a stand-in page).
pub async fn lose_page_mid_command(
    history: &History,
    client: &BridgeClient,
    session: &str,
    lose: impl AsyncFnOnce() -> Result<Value, String>,
) {
    history.invoke("command", json!({ "session": session, "name": "snapshot" }));
    let task = {
        let (client, session) = (client.clone(), session.to_string());
        tokio::spawn(async move {
            client
                .try_command(
                    Some(&session),
                    "snapshot",
                    json!({}),
                    Some(Duration::from_secs(60)),
                )
                .await
        })
    };
    let pending = poll::within(BOUND, async || match client.try_session(session).await {
        Ok(Some(entry)) if entry["pendingCommands"] == 1 => Some(()),
        _ => None,
    })
    .await
    .is_some();
    let lost = if pending {
        lose().await
    } else {
        Err("the command never showed pending at the page".into())
    };
    match lost {
        Ok(detail) => {
            history.fault(fault::LOSE_PAGE_MID_COMMAND, true, detail);
        }
        Err(why) => {
            task.abort();
            history.fault(
                fault::LOSE_PAGE_MID_COMMAND,
                false,
                json!({ "reason": why }),
            );
            return;
        }
    }
    let answer = match tokio::time::timeout(Duration::from_secs(70), task).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(join)) => Err(join.to_string()),
        Err(_) => Err("no answer within 70 s".into()),
    };
    let (op, value) = page_kit::classify(&answer);
    history.complete(op, "command", value);
}

/// H4.3: a tab closed mid-command. Our SDK in Chromium answers a query (control: a live page
/// answers); then the page's instrumented socket holds what the daemon sends, so the next command
/// reaches the page and stays unanswered (the harness sees it held in the page) while the daemon
/// shows it pending, and the tab is closed. The command must resolve as `observation_lost`,
/// never as the app's `ok:false`.
pub async fn tab_closed_mid_command(env: &GateEnv) -> Ran {
    tab_closed_mid_command_with(env, traced::TRACED).await
}

/// H4.3's scenario with `daemon_env` set on its daemon (traced only when it says so): the
/// negative control of the trace check on the bridge gives it the switch that breaks its trace.
pub async fn tab_closed_mid_command_with(env: &GateEnv, daemon_env: &[(&str, &str)]) -> Ran {
    let history = History::new();
    let rig = match SdkRig::launch_with(daemon_env).await {
        Ok(rig) => rig,
        Err(why) => return could_not_start(history, fault::LOSE_PAGE_MID_COMMAND, &why),
    };
    let tab = match rig.browser.open(&rig.url("closing")).await {
        Ok(tab) => tab,
        Err(err) => {
            return could_not_start(history, fault::LOSE_PAGE_MID_COMMAND, &err.to_string());
        }
    };
    page_kit::session_appears(&history, &rig.client, "closing", BOUND).await;
    let (op, answer) = page_kit::query_buttons(&history, &rig.client, "closing").await;
    control(
        &history,
        "the live page answers a command",
        op == OpType::Ok,
        answer,
    );
    if tab.eval::<bool>("window.__gate.hold = true").await.is_err() {
        return could_not_start(
            history,
            fault::LOSE_PAGE_MID_COMMAND,
            "could not make the page hold its commands",
        );
    }
    lose_page_mid_command(&history, &rig.client, "closing", async move || {
        let held = poll::within(BOUND, async || {
            let held: Vec<String> = tab.eval("window.__gate.held").await.ok()?;
            held.iter()
                .any(|frame| frame.contains("\"snapshot\""))
                .then_some(held)
        })
        .await
        .ok_or("the command never reached the page")?;
        tab.close()
            .await
            .map_err(|e| format!("the tab did not close: {e}"))?;
        Ok(json!({ "closed": "the tab, through CDP", "heldByThePage": held }))
    })
    .await;
    traced::call_on_rig_then_check_trace(env, &history, &rig).await;
    judged(history, judge_lost_page)
}

/// The negative control for H4.3: a stand-in page that, as its tab closes, answers the pending
/// command `ok:false` "app failed". The loss is blamed on the app, so the checker must score it
/// silent.
pub async fn stand_in_page_blames_the_app() -> Ran {
    let history = History::new();
    let (daemon, token) = match kit::daemon(OwnedDaemon::builder()).await {
        Ok(started) => started,
        Err(why) => return could_not_start(history, fault::LOSE_PAGE_MID_COMMAND, &why),
    };
    let client = BridgeClient::new(daemon.port());
    // It answers everything but `snapshot`, which it keeps for the moment its tab closes.
    let responder: Responder = std::sync::Arc::new(|command: &reticle::wire::Command| {
        (command.name != "snapshot").then(|| (true, json!({ "elements": [] })))
    });
    let mut page = match WirePage::open_with(daemon.port(), ORIGIN, Some(responder)).await {
        Ok(page) => page,
        Err(err) => {
            return could_not_start(history, fault::LOSE_PAGE_MID_COMMAND, &err.to_string());
        }
    };
    page.hello("stand-in", Some(&token)).await;
    page_kit::session_appears(&history, &client, "stand-in", BOUND).await;
    let (op, answer) = page_kit::command(&history, &client, "stand-in", "query", json!({})).await;
    control(
        &history,
        "the live page answers a command",
        op == OpType::Ok,
        answer,
    );
    lose_page_mid_command(&history, &client, "stand-in", async move || {
        let command = page
            .next_command(BOUND)
            .await
            .ok_or("the stand-in never received the command")?;
        page.answer(&command, false, json!("app failed")).await;
        page.close().await;
        Ok(json!({ "stand_in": "answered ok:false \"app failed\" as its tab closed" }))
    })
    .await;
    judged(history, judge_lost_page)
}

/// Judges an H4.3 history: the pending command must end as `observation_lost`.
pub fn judge_lost_page(ops: &[Op]) -> Judgement {
    settle(|| {
        let (done, said) = command_answer(
            ops,
            fault::LOSE_PAGE_MID_COMMAND,
            "the pending command was never answered after the page went away",
        )?;
        let v = &done.value;
        Ok(match (done.op_type, v["outcome"].as_str()) {
            (OpType::Info, Some("observation_lost")) => {
                Judgement::new(RowOutcome::Surfaced, format!("observation_lost: {said}"))
            }
            (OpType::Info, Some(other)) => Judgement::new(
                RowOutcome::Silent,
                format!("the command ended `{other}` instead of observation_lost: {said}"),
            ),
            (OpType::Info, None) => return Err(daemon_stopped_answering(&said)),
            (OpType::Fail, Some("answered")) => Judgement::new(
                RowOutcome::Silent,
                format!("the loss was blamed on the app: answered ok:false \"{said}\""),
            ),
            (OpType::Fail, _) => Judgement::new(
                RowOutcome::Silent,
                format!("the pending command was refused instead of lost: {said}"),
            ),
            (_, _) => Judgement::new(
                RowOutcome::Silent,
                format!("the command reported success from a page that went away: {said}"),
            ),
        })
    })
}

/// H4.3 in the row table.
pub const H4_3: RowGate = RowGate {
    id: "H4.3",
    file: file!(),
    scenario: |env| Box::pin(tab_closed_mid_command(env)),
    judge: judge_lost_page,
    controls: &[StandIn::PageBlamesTheApp, StandIn::BrokenTraceOnTheBridge],
};

#[cfg(test)]
mod tests {
    use super::*;

    fn lost_page(answer: Value, op: OpType) -> Vec<Op> {
        let h = History::new();
        control(&h, "the live page answers a command", true, json!({}));
        h.invoke("command", json!({}));
        h.fault(fault::LOSE_PAGE_MID_COMMAND, true, json!({}));
        h.complete(op, "command", answer);
        h.ops()
    }

    #[test]
    fn a_lost_page_is_surfaced_only_as_observation_lost() {
        let lost = lost_page(
            json!({"outcome": "observation_lost", "reason": "the page disconnected (closed)"}),
            OpType::Info,
        );
        assert_eq!(judge_lost_page(&lost).outcome, RowOutcome::Surfaced);
        let blamed = lost_page(
            json!({"outcome": "answered", "ok": false, "error": "app failed"}),
            OpType::Fail,
        );
        let judged = judge_lost_page(&blamed);
        assert_eq!(judged.outcome, RowOutcome::Silent);
        assert!(
            judged.evidence.contains("blamed on the app"),
            "{}",
            judged.evidence
        );
        let hung = lost_page(json!({"outcome": "timed_out"}), OpType::Info);
        assert_eq!(judge_lost_page(&hung).outcome, RowOutcome::Silent);
        let dead = lost_page(json!({"message": "connection refused"}), OpType::Info);
        assert_eq!(judge_lost_page(&dead).outcome, RowOutcome::Inconclusive);
    }
}
