//! `reticle_navigate`: go to a URL or reload, and say whether the page's arrival on its new
//! document was confirmed (within [`ARRIVAL_BOUND`]). While the agent records, a navigation is
//! noted. It proves nothing about the app.

use serde_json::{Value, json};

use crate::tools::arrival::{ARRIVAL_BOUND, Arrival, arrive};
use crate::tools::call::Call;
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::NavigateArgs;
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, SessionUse, Tool};
use crate::wire::CommandName;

async fn navigate(call: &Call<'_>, a: NavigateArgs) -> Result<Value, Refusal> {
    let session = call.session()?;
    let reload = a.reload == Some(true);
    let (command, args) = match (&a.url, reload) {
        (Some(url), false) => (CommandName::Navigate, json!({ "url": url })),
        (None, true) => (
            CommandName::Refresh,
            json!({ "hard": a.hard == Some(true) }),
        ),
        _ => {
            return Err(Refusal::bad_arguments(
                call.tool.as_str(),
                "give exactly one of `url` and `reload: true`",
            ));
        }
    };
    let arrival = arrive(call, session, command, args, a.url.clone(), ARRIVAL_BOUND).await?;
    if let Some(url) = &a.url {
        crate::tools::recording::note_navigation(call, session, url);
    }
    let Arrival { page, url, .. } = &arrival;
    let mut result = json!({
        "dispatched": true,
        "confirmed": page.is_some(),
        "url": page.as_ref().map(|s| s.identity().url).or(url.clone()),
    });
    if page.is_none() {
        result["note"] = json!(arrival.missing_note(session.id(), ARRIVAL_BOUND));
    }
    Ok(result)
}

/// `reticle_navigate`, as the registry knows it.
pub struct Navigate;

impl Tool for Navigate {
    const NAME: ToolName = ToolName::Navigate;
    const DESCRIPTION: &'static str =
        "Go to a URL or reload, and say whether the new document's arrival was confirmed.";
    const OUTPUT: &'static [&'static str] = &["dispatched", "url", "confirmed", "note"];
    const SESSION: SessionUse = SessionUse::Bound;
    const DRIVES_SESSION: bool = true;
    type Args = NavigateArgs;

    fn run<'a>(call: &'a Call<'a>, a: NavigateArgs) -> Answer<'a> {
        Box::pin(navigate(call, a))
    }
}
