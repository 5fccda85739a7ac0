//! F3: a stale ref is never replayed. A flow replayed after a reload resolves its targets
//! afresh, and a capsule holding only a ref is refused naming it. Its scenario, judge and control.

use serde_json::json;

use super::{FlowRig, counter_changed, counter_click, harness_ops, save};
use crate::controls::StandIn;
use crate::history::{History, Op};
use crate::judge::{self, Judgement, RowOutcome};
use crate::rows::RowGate;
use crate::scenarios::kit::{control, controls_held, could_not_start, judged, observe, settle};
use crate::scenarios::{GateEnv, Ran};

/// F3 at its target.
pub async fn stale_never_replayed(env: &GateEnv) -> Ran {
    stale_refs(env, &[]).await
}

pub(super) async fn stale_refs(gate: &GateEnv, daemon_env: &[(&str, &str)]) -> Ran {
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

/// F3 in the row table.
pub const F3: RowGate = RowGate {
    id: "F3",
    file: file!(),
    scenario: |env| Box::pin(stale_never_replayed(env)),
    judge: judge_stale_refs,
    controls: &[StandIn::FlowPromise],
};

#[cfg(test)]
mod tests {
    //! Negative control of the judge: a replay that failed after the reload scores `silent`.
    use serde_json::json;

    use super::super::test_history::established;
    use super::*;

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
