//! `reticle_refresh`: reload the page in place (`hard` asks the SDK to bypass what it can of the
//! cache) and say whether its arrival was confirmed; the reference's name for `reticle_navigate
//! {reload: true}`, which it shares the arrival with. It proves nothing about the app.

use serde_json::{Value, json};

use crate::tools::arrival::{ARRIVAL_BOUND, arrive};
use crate::tools::call::Call;
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::RefreshArgs;
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, SessionUse, Tool};
use crate::wire::CommandName;

async fn refresh(call: &Call<'_>, a: RefreshArgs) -> Result<Value, Refusal> {
    let session = call.session()?;
    let hard = a.hard == Some(true);
    let args = json!({ "hard": hard });
    let arrival = arrive(
        call,
        session,
        CommandName::Refresh,
        args,
        None,
        ARRIVAL_BOUND,
    )
    .await?;
    let mut result = json!({
        "dispatched": true,
        "hard": hard,
        "confirmed": arrival.page.is_some(),
        "url": arrival.page.as_ref().map(|s| s.identity().url).or(arrival.url.clone()),
    });
    if arrival.page.is_none() {
        result["note"] = json!(arrival.missing_note(session.id(), ARRIVAL_BOUND));
    }
    Ok(result)
}

/// `reticle_refresh`, as the registry knows it.
pub struct Refresh;

impl Tool for Refresh {
    const NAME: ToolName = ToolName::Refresh;
    const TITLE: &'static str = "Reload the page";
    const EFFECT: Effect = Effect::Navigates;
    const DESCRIPTION: &'static str =
        "Reload the page in place (reticle_navigate {reload:true}) and say whether it came back.";
    const OUTPUT: &'static [&'static str] = &["dispatched", "confirmed", "url", "note"];
    const SESSION: SessionUse = SessionUse::Bound;
    const DRIVES_SESSION: bool = true;
    type Args = RefreshArgs;

    fn run<'a>(call: &'a Call<'a>, a: RefreshArgs) -> Answer<'a> {
        Box::pin(refresh(call, a))
    }
}
