//! Capsule replay: `reticle_replay` reads a capsule a red `reticle_act_and_wait` left
//! ([`crate::tools::capsules::load`]) and runs the same act on the page now through the flow
//! step runner ([`super::player::run_step`]), answering whether it is still red. A capsule of
//! another tool, one naming its element only by ref, or one with a redacted typed value is
//! refused by name; nothing runs.
//! It re-runs capsules; it must not write or change them.

use serde_json::{Value, json};

use super::player::run_step;
use crate::flow::redact::{REDACTED, mentions_a_secret};
use crate::tools::call::Call;
use crate::tools::capsules;
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::{ActAndWaitArgs, FlowStep};
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, SessionUse, Tool};
use crate::verdict::Verified;

async fn replay(
    call: &Call<'_>,
    a: crate::tools::surface::args::ReplayArgs,
) -> Result<Value, Refusal> {
    let session = call.session()?;
    let (name, capsule) = capsules::load(call.ctx.workspace(), &a.capsule)?;
    let mut step = step_of(&name, &capsule)?;
    if a.confirm_dangerous == Some(true) {
        step.args.get_or_insert_default().confirm_dangerous = Some(true);
    }
    let (verified, record, _) = run_step(call, session, 1, step).await;
    let original = &capsule["verdict"];
    let mut answer = json!({
        "ok": true,
        "capsule": name,
        "stillRed": verified != Verified::Yes,
        "verified": verified,
        "original": {
            "verified": original["verified"],
            "reason": original["reason"],
            "because": original["because"],
        },
    });
    for (key, value) in record.as_object().into_iter().flatten() {
        if !["step", "verified"].contains(&key.as_str()) {
            answer[key] = value.clone();
        }
    }
    Ok(answer)
}

/// The act a capsule holds, as a step to run again; a capsule that cannot be re-run is refused
/// naming why.
fn step_of(name: &str, capsule: &Value) -> Result<FlowStep, Refusal> {
    let tool = capsule["tool"].as_str().unwrap_or("");
    if tool != ToolName::ActAndWait.as_str() {
        let recovery = match capsule["flow"].as_str() {
            Some(flow) => {
                format!("replay the flow instead: reticle_flow_replay {{\"name\":\"{flow}\"}}")
            }
            None => "pass a capsule a red reticle_act_and_wait left".to_string(),
        };
        return Err(Refusal::new(
            format!(
                "the capsule '{name}' was left by {}, not by reticle_act_and_wait; nothing was run",
                if tool.is_empty() {
                    "an unknown tool"
                } else {
                    tool
                }
            ),
            recovery,
        ));
    }
    let mut arguments = capsule["arguments"].clone();
    if let Some(map) = arguments.as_object_mut() {
        map.remove(crate::tools::surface::args::SESSION_ID);
    }
    let parsed: ActAndWaitArgs = serde_json::from_value(arguments.clone()).map_err(|e| {
        Refusal::new(
            format!(
                "the capsule '{name}' holds arguments this build cannot read ({e}); nothing was run"
            ),
            "re-run the act with reticle_act_and_wait",
        )
    })?;
    let Some(target) = parsed.target else {
        return Err(Refusal::new(
            format!(
                "the capsule '{name}' names its element only by ref ({}), and a ref is never valid beyond the page it was minted on; nothing was run",
                parsed.element_ref.unwrap_or_default()
            ),
            "re-run the act with reticle_act_and_wait naming the element by target (testid, role and name, label...)",
        ));
    };
    if arguments["args"].to_string().contains(REDACTED) || mentions_a_secret(&json!(target)) {
        return Err(Refusal::new(
            format!("the capsule '{name}' typed a secret, which it does not keep; nothing was run"),
            "re-run the act with reticle_act_and_wait, giving the value",
        ));
    }
    Ok(FlowStep {
        target,
        action: parsed.action,
        args: parsed.args,
        until: parsed.until,
        timeout_ms: parsed.timeout_ms,
    })
}

/// `reticle_replay`, as the registry knows it.
pub struct Replay;

impl Tool for Replay {
    const NAME: ToolName = ToolName::Replay;
    const TITLE: &'static str = "Replay a capsule";
    const EFFECT: Effect = Effect::Changes;
    const DESCRIPTION: &'static str = "Re-run a red reticle_act_and_wait from its capsule (`capsule`: its capsuleSaved path) on the page now, resolving its target afresh, and say whether it is still red, with the verdict and evidence.";
    const OUTPUT: &'static [&'static str] =
        &["stillRed", "verified", "because", "evidence", "original"];
    const SESSION: SessionUse = SessionUse::Bound;
    const DRIVES_SESSION: bool = true;
    type Args = crate::tools::surface::args::ReplayArgs;

    fn run<'a>(call: &'a Call<'a>, a: crate::tools::surface::args::ReplayArgs) -> Answer<'a> {
        Box::pin(replay(call, a))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capsule(arguments: Value) -> Value {
        json!({"tool": "reticle_act_and_wait", "arguments": arguments,
               "verdict": {"verified": "no"}})
    }

    #[test]
    fn a_capsule_is_a_step_and_one_that_cannot_be_rerun_is_refused_by_name() {
        let step = step_of(
            "c1",
            &capsule(
                json!({"sessionId": "s", "target": {"testid": "go"}, "action": "click",
                "until": {"kind": "signal", "name": "done"}, "timeout_ms": 500}),
            ),
        )
        .unwrap();
        assert_eq!(step.target.testid.as_deref(), Some("go"));
        assert_eq!(step.timeout_ms, Some(500));

        let by_ref = step_of("c2", &capsule(json!({"ref": "e3", "action": "click"}))).unwrap_err();
        assert!(
            by_ref.reason.contains("c2") && by_ref.reason.contains("e3"),
            "{by_ref}"
        );

        let secret = step_of(
            "c3",
            &capsule(json!({"target": {"label": "Password"}, "action": "fill",
                "args": {"value": REDACTED}})),
        )
        .unwrap_err();
        assert!(secret.reason.contains("secret"), "{secret}");

        let flow = step_of(
            "c4",
            &json!({"tool": "reticle_flow_replay", "flow": "sign-in", "arguments": {}}),
        )
        .unwrap_err();
        assert!(
            flow.reason.contains("c4") && flow.recovery.contains("sign-in"),
            "{flow}"
        );

        let unknown = step_of(
            "c5",
            &json!({"tool": "reticle_act_and_wait", "arguments": {"action": "jump"}}),
        )
        .unwrap_err();
        assert!(unknown.reason.contains("c5"), "{unknown}");
    }
}
