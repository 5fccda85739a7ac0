//! `reticle_capabilities`: what the page offers (testids, signals, stores, commands). It reads
//! only.

use serde_json::{Value, json};

use crate::tools::call::Call;
use crate::tools::commands::ask;
use crate::tools::refusal::Refusal;
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, SessionUse, Tool};
use crate::wire::CommandName;

async fn capabilities(call: &Call<'_>) -> Result<Value, Refusal> {
    ask(call.session()?, CommandName::Capabilities, json!({})).await
}

/// `reticle_capabilities`, as the registry knows it.
pub struct Capabilities;

impl Tool for Capabilities {
    const NAME: ToolName = ToolName::Capabilities;
    const TITLE: &'static str = "Page capabilities";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str =
        "What the page offers: its testids, signals, stores and commands. Reads only.";
    const SESSION: SessionUse = SessionUse::Bound;
    type Args = crate::tools::surface::args::SessionOnly;

    fn run<'a>(call: &'a Call<'a>, _: crate::tools::surface::args::SessionOnly) -> Answer<'a> {
        Box::pin(capabilities(call))
    }
}
