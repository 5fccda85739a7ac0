//! `reticle_act`: one action on one element (a ref, or a target resolved afresh), dispatched;
//! it returns `since` and an `actionId` and proves nothing. While the agent records, the act is
//! appended to the recording.

use serde_json::{Value, json};

use crate::tools::acting::{PROVES_NOTHING, begin, dispatch, element_ref, taken};
use crate::tools::call::Call;
use crate::tools::commands::{COMMAND_BOUND, Outcome, refusal_for};
use crate::tools::recording;
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::ActArgs;
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, SessionUse, Tool};
use crate::wire::args::ActSettle;

async fn act(call: &Call<'_>, a: ActArgs) -> Result<Value, Refusal> {
    let session = call.session()?;
    let r = element_ref(call.tool, session, a.element_ref, a.target.clone()).await?;
    let whereabouts = recording::locate_for_recording(call, session, a.target.as_ref(), &r).await;
    let (action_id, since) = begin(call, session);
    let (outcome, input) = dispatch(
        call,
        session,
        &r,
        a.action,
        a.args.clone(),
        ActSettle::Quiet,
        COMMAND_BOUND,
    )
    .await;
    let Outcome::Done(result) = outcome else {
        return Err(refusal_for("act", outcome));
    };
    recording::capture(call, session, whereabouts, taken(a.action, a.args, None));
    let mut answer = json!({
        "ok": true,
        "actionId": action_id,
        "since": since,
        "ref": r,
        "action": a.action.as_str(),
        "dispatched": result.get("dispatched").cloned().unwrap_or(json!(true)),
        "settled": result.get("settled").cloned().unwrap_or(Value::Null),
        "effect": result.get("effect").cloned().unwrap_or(Value::Null),
        "note": PROVES_NOTHING,
    });
    input.stamp(&mut answer);
    if let Some(w) = result.get("warning") {
        answer["warning"] = w.clone();
    }
    Ok(answer)
}

/// `reticle_act`, as the registry knows it.
pub struct Act;

impl Tool for Act {
    const NAME: ToolName = ToolName::Act;
    const TITLE: &'static str = "Act on an element";
    const EFFECT: Effect = Effect::Changes;
    const DESCRIPTION: &'static str = "Do one action to one element. Returns `since` and `actionId` to read what followed; verify with reticle_act_and_wait or reticle_assert.";
    const OUTPUT: &'static [&'static str] = &["since", "actionId", "dispatched", "effect", "note"];
    const SESSION: SessionUse = SessionUse::Bound;
    const DRIVES_SESSION: bool = true;
    type Args = ActArgs;

    fn run<'a>(call: &'a Call<'a>, a: ActArgs) -> Answer<'a> {
        Box::pin(act(call, a))
    }
}
