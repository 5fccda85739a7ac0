//! F1: heal never guesses. A sign-in flow healed with `apply: true` where no consequence proves
//! the new target writes no new version and says why. Its scenario, judge and the judge's control.

use serde_json::json;

use super::{FlowRig, PASSWORD_ENV, harness_ops, save, sign_in};
use crate::controls::StandIn;
use crate::history::{History, Op};
use crate::judge::{self, Judgement, RowOutcome};
use crate::rows::RowGate;
use crate::scenarios::kit::{control, controls_held, could_not_start, judged, observe, settle};
use crate::scenarios::{GateEnv, Ran};

/// F1 at its target.
pub async fn heal_never_guesses(env: &GateEnv) -> Ran {
    heal(env, &[]).await
}

pub(super) async fn heal(gate: &GateEnv, daemon_env: &[(&str, &str)]) -> Ran {
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

/// F1 in the row table.
pub const F1: RowGate = RowGate {
    id: "F1",
    file: file!(),
    scenario: |env| Box::pin(heal_never_guesses(env)),
    judge: judge_heal,
    controls: &[StandIn::FlowPromise],
};

#[cfg(test)]
mod tests {
    //! Negative control of the judge: a written heal scores `silent`.
    use serde_json::json;

    use super::super::test_history::established;
    use super::*;

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
}
