//! `reticle_act_and_wait`: act, wait for `until` (or for the page to settle) and answer the
//! verdict through the resolve-act-judge core ([`crate::tools::acting`]); a red verdict leaves
//! a capsule under `.reticle/capsules/`.

use serde_json::{Value, json};

use crate::tools::acting::{DEFAULT_WAIT, Judged, JudgedAct, capsule_events, resolve_act_judge};
use crate::tools::bounds::bound;
use crate::tools::call::Call;
use crate::tools::capsules;
use crate::tools::judging::predicate_of;
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::ActAndWaitArgs;
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, SessionUse, Tool};
use crate::verdict::Verified;

async fn act_and_wait(call: &Call<'_>, a: ActAndWaitArgs) -> Result<Value, Refusal> {
    let session = call.session()?;
    let until = match &a.until {
        Some(until) => Some(predicate_of(call.tool.as_str(), "until", &until.0)?),
        None => None,
    };
    let job = JudgedAct {
        element_ref: a.element_ref,
        target: a.target,
        action: a.action,
        args: a.args,
        until,
        wait: bound(a.timeout_ms, DEFAULT_WAIT),
    };
    let Judged {
        verdict,
        mut answer,
        window,
    } = resolve_act_judge(call, session, job).await?;
    if verdict.verified != Verified::Yes {
        let capsule = json!({
            "tool": call.tool.as_str(),
            "sessionId": session.id(),
            "arguments": call.arguments,
            "verdict": &answer,
            "events": capsule_events(&window),
        });
        match capsules::save(call.ctx.workspace(), &capsule) {
            Ok(name) => answer["capsuleSaved"] = json!(name),
            Err(why) => answer["capsuleError"] = json!(why),
        }
    }
    Ok(answer)
}

/// `reticle_act_and_wait`, as the registry knows it.
pub struct ActAndWait;

impl Tool for ActAndWait {
    const NAME: ToolName = ToolName::ActAndWait;
    const TITLE: &'static str = "Act and get a verdict";
    const EFFECT: Effect = Effect::Changes;
    const DESCRIPTION: &'static str = "Act, then wait until `until` holds (without it, until the page settles); returns a verdict (yes, no or unknown, with a reason), its evidence, a digest of what the app did and a cursor.";
    const OUTPUT: &'static [&'static str] = &[
        "verified",
        "reason",
        "because",
        "evidence",
        "advice",
        "lost",
        "reaction",
        "since",
        "next",
        "capsuleSaved",
    ];
    const SESSION: SessionUse = SessionUse::Bound;
    const DRIVES_SESSION: bool = true;
    type Args = ActAndWaitArgs;

    fn run<'a>(call: &'a Call<'a>, a: ActAndWaitArgs) -> Answer<'a> {
        Box::pin(act_and_wait(call, a))
    }
}
