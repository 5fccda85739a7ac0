//! `reticle_act_sequence`: several actions in order, stopping at the first that fails; one
//! `actionId` for all. It proves nothing about the app.

use serde_json::{Value, json};

use crate::tools::acting::{PROVES_NOTHING, begin, dispatch, element_ref, taken};
use crate::tools::bounds::bound;
use crate::tools::call::Call;
use crate::tools::commands::{COMMAND_BOUND, Outcome, refusal_for};
use crate::tools::recording;
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::ActSequenceArgs;
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, SessionUse, Tool};
use crate::wire::args::ActSettle;

async fn act_sequence(call: &Call<'_>, a: ActSequenceArgs) -> Result<Value, Refusal> {
    let session = call.session()?;
    let per_step = bound(a.timeout_ms, COMMAND_BOUND);
    let (action_id, since) = begin(call, session);
    let total = a.steps.len();
    let mut done = Vec::new();
    for (i, step) in a.steps.into_iter().enumerate() {
        let outcome = match element_ref(call.tool, session, step.element_ref, step.target.clone())
            .await
        {
            Ok(r) => {
                let whereabouts =
                    recording::locate_for_recording(call, session, step.target.as_ref(), &r).await;
                let (outcome, input) = dispatch(
                    call,
                    session,
                    &r,
                    step.action,
                    step.args.clone(),
                    ActSettle::Quiet,
                    per_step,
                )
                .await;
                match outcome {
                    Outcome::Done(result) => {
                        recording::capture(
                            call,
                            session,
                            whereabouts,
                            taken(step.action, step.args, None),
                        );
                        let mut step = json!({
                            "ref": r,
                            "action": step.action.as_str(),
                            "dispatched": result.get("dispatched").cloned().unwrap_or(json!(true)),
                            "effect": result.get("effect").cloned().unwrap_or(Value::Null),
                        });
                        input.stamp(&mut step);
                        Ok(step)
                    }
                    other => Err(refusal_for("act", other)),
                }
            }
            Err(unresolved) => Err(unresolved.into()),
        };
        match outcome {
            Ok(step) => done.push(step),
            Err(refusal) => {
                return Ok(json!({
                    "ok": false,
                    "actionId": action_id,
                    "since": since,
                    "completed": done.len(),
                    "total": total,
                    "stalledAt": i,
                    "reason": format!("step {} of {total} failed after {} completed: {}", i + 1, done.len(), refusal.reason),
                    "recovery": refusal.recovery,
                    "steps": done,
                    "note": PROVES_NOTHING,
                }));
            }
        }
    }
    Ok(json!({
        "ok": true,
        "actionId": action_id,
        "since": since,
        "completed": done.len(),
        "total": total,
        "steps": done,
        "note": PROVES_NOTHING,
    }))
}

/// `reticle_act_sequence`, as the registry knows it.
pub struct ActSequence;

impl Tool for ActSequence {
    const NAME: ToolName = ToolName::ActSequence;
    const TITLE: &'static str = "Act in sequence";
    const EFFECT: Effect = Effect::Changes;
    const DESCRIPTION: &'static str = "Do several actions in order, stopping at the first that fails. Returns `since` and one `actionId`.";
    const OUTPUT: &'static [&'static str] = &[
        "since",
        "actionId",
        "completed",
        "steps",
        "stalledAt",
        "note",
    ];
    const SESSION: SessionUse = SessionUse::Bound;
    const DRIVES_SESSION: bool = true;
    type Args = ActSequenceArgs;

    fn run<'a>(call: &'a Call<'a>, a: ActSequenceArgs) -> Answer<'a> {
        Box::pin(act_sequence(call, a))
    }
}
