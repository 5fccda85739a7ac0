//! `reticle_inspect`: all the SDK knows of one element, by ref. It reads only.

use serde_json::{Value, json};

use crate::tools::call::Call;
use crate::tools::commands::ask;
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::InspectArgs;
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, SessionUse, Tool};
use crate::wire::CommandName;

async fn inspect(call: &Call<'_>, a: InspectArgs) -> Result<Value, Refusal> {
    let session = call.session()?;
    let element = ask(
        session,
        CommandName::Inspect,
        json!({ "ref": a.element_ref }),
    )
    .await?;
    Ok(json!({ "element": element }))
}

/// `reticle_inspect`, as the registry knows it.
pub struct Inspect;

impl Tool for Inspect {
    const NAME: ToolName = ToolName::Inspect;
    const TITLE: &'static str = "Inspect an element";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str = "All the SDK knows of one element: role, name, value, states, box, occlusion, styles. Reads only.";
    const OUTPUT: &'static [&'static str] = &["element"];
    const SESSION: SessionUse = SessionUse::Bound;
    type Args = InspectArgs;

    fn run<'a>(call: &'a Call<'a>, a: InspectArgs) -> Answer<'a> {
        Box::pin(inspect(call, a))
    }
}
