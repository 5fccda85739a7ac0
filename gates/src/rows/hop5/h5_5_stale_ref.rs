//! H5.5: a ref held across a re-render and a reload is refused naming it, and the element now
//! in its place is not clicked. Its scenario and judge.

use harness::browser::Tab;
use harness::{SdkRig, poll};
use serde_json::{Value, json};

use crate::fault;
use crate::history::{History, Op, OpType};
use crate::judge::{Judgement, RowOutcome, one_line, text};
use crate::rows::RowGate;
use crate::scenarios::fault_segments::established;
use crate::scenarios::kit::{
    BOUND, control, controls_held, could_not_start, judged, observe, settle, worst,
};
use crate::scenarios::page_kit;
use crate::scenarios::{GateEnv, Ran, traced};

const TARGET: &str = "document.querySelector('[data-testid=\"rerender-target\"]')";

const CLICKS: &str = "document.querySelector('[data-testid=\"rerender-clicks\"]').textContent";

/// Queries the fixture app's re-rendering target and returns its ref.
async fn target_ref(history: &History, rig: &SdkRig, session: &str) -> Option<String> {
    let (_, answer) = page_kit::command(
        history,
        &rig.client,
        session,
        "query",
        json!({"testid": "rerender-target"}),
    )
    .await;
    answer["result"]["elements"][0]["ref"]
        .as_str()
        .map(str::to_string)
}

/// Clicks `stale` through the bridge and records the target's click count as the page shows it.
async fn act_on(history: &History, rig: &SdkRig, tab: &Tab, session: &str, stale: &str) {
    page_kit::command(
        history,
        &rig.client,
        session,
        "act",
        json!({"ref": stale, "action": "click"}),
    )
    .await;
    let clicks: String = tab.eval(CLICKS).await.unwrap_or_default();
    observe(history, "clicks", json!({ "text": clicks }));
}

/// H5.5: a ref held across a re-render and across a reload, on the fixture app (`apps/e2e/`,
/// whose "Re-render the target" button replaces the target with a new element of the same shape).
/// Acting on the stale ref must be refused naming the ref, and the new occupant must not be
/// clicked (its click count, read from the page, stays 0). Control: a fresh ref to the new element
/// clicks it (count 1), so "not clicked" means refused, not broken.
pub async fn stale_ref_is_refused(env: &GateEnv) -> Ran {
    let history = History::new();
    let session = "refs";
    let rig = match SdkRig::launch_with(traced::TRACED).await {
        Ok(rig) => rig,
        Err(why) => return could_not_start(history, fault::RERENDER, &why),
    };
    let tab = match rig.browser.open(&rig.fixture_url(session)).await {
        Ok(tab) => tab,
        Err(err) => return could_not_start(history, fault::RERENDER, &err.to_string()),
    };
    page_kit::session_appears(&history, &rig.client, session, BOUND).await;
    let Some(stale) = target_ref(&history, &rig, session).await else {
        return could_not_start(history, fault::RERENDER, "the target could not be queried");
    };
    let rendered: String = tab
        .eval(&format!(
            "document.querySelector('[data-testid=\"rerender\"]').click(); {TARGET}.textContent"
        ))
        .await
        .unwrap_or_default();
    history.fault(
        fault::RERENDER,
        rendered.contains("render 2"),
        json!({ "heldRef": stale, "target": rendered }),
    );
    act_on(&history, &rig, &tab, session, &stale).await;

    let fresh = target_ref(&history, &rig, session).await;
    let (op, _) = page_kit::command(
        &history,
        &rig.client,
        session,
        "act",
        json!({"ref": fresh, "action": "click"}),
    )
    .await;
    let clicks: String = tab.eval(CLICKS).await.unwrap_or_default();
    control(
        &history,
        "a fresh ref to the new element clicks it",
        op == OpType::Ok && fresh.as_deref() != Some(stale.as_str()) && clicks.ends_with(": 1"),
        json!({ "fresh": fresh, "stale": stale, "clicks": clicks }),
    );
    let Some(held) = fresh else {
        return judged(history, judge_stale_refs);
    };

    let _ = tab
        .eval::<Value>("window.__beforeReload = true; true")
        .await;
    let reloaded = tab.reload().await.is_ok()
        && poll::within(BOUND, async || {
            let fresh_page = tab
                .eval::<bool>("window.__beforeReload === undefined")
                .await
                .ok()?;
            let answer = rig
                .client
                .try_command(
                    Some(session),
                    "query",
                    json!({"testid": "rerender-target"}),
                    None,
                )
                .await
                .ok()?;
            (fresh_page && answer["ok"] == true).then_some(())
        })
        .await
        .is_some();
    history.fault(fault::RELOAD, reloaded, json!({ "heldRef": held }));
    act_on(&history, &rig, &tab, session, &held).await;
    traced::call_on_rig_then_check_trace(env, &history, &rig).await;
    judged(history, judge_stale_refs)
}

/// Judges H5.5's history.
pub fn judge_stale_refs(ops: &[Op]) -> Judgement {
    settle(|| {
        controls_held(ops)?;
        let mut parts = Vec::new();
        for fault in [fault::RERENDER, fault::RELOAD] {
            for segment in established(ops, fault)? {
                let held = segment.fault.value["heldRef"].as_str().unwrap_or("?");
                let clicks = segment
                    .observed("clicks")
                    .and_then(|o| o.value["text"].as_str())
                    .unwrap_or("");
                let clicked = !clicks.ends_with(": 0");
                parts.push(match segment.completions("command").first() {
                    Some(op) if op.op_type == OpType::Ok => Judgement::new(
                        RowOutcome::Silent,
                        format!("after the {fault}, {held} clicked through ({clicks})"),
                    ),
                    _ if clicked => Judgement::new(
                        RowOutcome::Silent,
                        format!("after the {fault}, the new occupant was clicked ({clicks})"),
                    ),
                    Some(op) if op.op_type == OpType::Fail => {
                        let said = one_line(&text(&op.value));
                        if said.contains(held) {
                            Judgement::new(
                                RowOutcome::Surfaced,
                                format!("after the {fault}: \"{said}\""),
                            )
                        } else {
                            Judgement::new(
                                RowOutcome::Silent,
                                format!("after the {fault}, refused without naming {held}: {said}"),
                            )
                        }
                    }
                    other => Judgement::new(
                        RowOutcome::Silent,
                        format!(
                            "after the {fault}, acting on {held} got no definite answer: {}",
                            one_line(&other.map(|o| text(&o.value)).unwrap_or_default())
                        ),
                    ),
                });
            }
        }
        Ok(worst(parts))
    })
}

/// H5.5 in the row table.
pub const H5_5: RowGate = RowGate {
    id: "H5.5",
    file: file!(),
    scenario: |env| Box::pin(stale_ref_is_refused(env)),
    judge: judge_stale_refs,
    controls: &[],
};
