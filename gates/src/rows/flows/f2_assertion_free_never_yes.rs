//! F2: a flow whose steps check nothing, replayed and verified, never answers `yes` and says
//! why. Its scenario, judge and the judge's control.

use serde_json::json;

use super::{FlowRig, counter_changed, counter_click, harness_ops, save};
use crate::controls::StandIn;
use crate::history::{History, Op};
use crate::judge::{self, Judgement, RowOutcome};
use crate::rows::RowGate;
use crate::scenarios::kit::{control, controls_held, could_not_start, judged, observe, settle};
use crate::scenarios::{GateEnv, Ran};

/// F2 at its target.
pub async fn assertion_free_never_yes(env: &GateEnv) -> Ran {
    assertion_free(env, &[]).await
}

pub(super) async fn assertion_free(gate: &GateEnv, daemon_env: &[(&str, &str)]) -> Ran {
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

/// F2 in the row table.
pub const F2: RowGate = RowGate {
    id: "F2",
    file: file!(),
    scenario: |env| Box::pin(assertion_free_never_yes(env)),
    judge: judge_assertion_free,
    controls: &[StandIn::FlowPromise],
};

#[cfg(test)]
mod tests {
    //! Negative control of the judge: a `yes` for an assertion-free flow scores `silent`.
    use serde_json::json;

    use super::super::test_history::established;
    use super::*;

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
}
