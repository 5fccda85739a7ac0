//! `reticle_navigate`: go to a URL or reload, and say whether the page's arrival on its new
//! document was confirmed (within [`ARRIVAL_BOUND`]). While the agent records, a navigation is
//! noted. It proves nothing about the app.

use serde_json::{Value, json};

use crate::tools::arrival::{ARRIVAL_BOUND, Arrival, arrive};
use crate::tools::call::Call;
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::NavigateArgs;
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, SessionUse, Tool};
use crate::wire::CommandName;

async fn navigate(call: &Call<'_>, a: NavigateArgs) -> Result<Value, Refusal> {
    let session = call.session()?;
    let reload = a.reload == Some(true);
    // `{url, reload: true}` is the reference's spelling of a reload in place: the reload wins
    // and the answer says the url was not used.
    let url_unused = reload && a.url.is_some();
    let url_arg = if reload { None } else { a.url.clone() };
    let (command, args) = match (&url_arg, reload) {
        (Some(url), false) => (CommandName::Navigate, json!({ "url": url })),
        (None, true) => (
            CommandName::Refresh,
            json!({ "hard": a.hard == Some(true) }),
        ),
        _ => {
            return Err(Refusal::bad_arguments(
                call.tool.as_str(),
                "give `url`, or `reload: true` (with `url` too, the reload wins)",
            ));
        }
    };
    let arrival = arrive(call, session, command, args, url_arg.clone(), ARRIVAL_BOUND).await?;
    if let Some(url) = &url_arg {
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
    } else if url_unused {
        result["note"] = json!("reload: true reloaded the page in place; `url` was not used");
    }
    Ok(result)
}

/// `reticle_navigate`, as the registry knows it.
pub struct Navigate;

impl Tool for Navigate {
    const NAME: ToolName = ToolName::Navigate;
    const TITLE: &'static str = "Navigate or reload";
    const EFFECT: Effect = Effect::Navigates;
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
