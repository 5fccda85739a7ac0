//! `reticle_clock`: freeze the page's timers, advance them, or reset to real time. It proves
//! nothing about the app.

use serde_json::{Map, Value};

use crate::tools::call::Call;
use crate::tools::commands::{ask, put};
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::ClockArgs;
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, SessionUse, Tool};
use crate::wire::CommandName;

async fn clock(call: &Call<'_>, a: ClockArgs) -> Result<Value, Refusal> {
    let mut args = Map::new();
    put(&mut args, "freeze", a.freeze);
    put(&mut args, "advanceMs", a.advance_ms);
    put(&mut args, "reset", a.reset);
    ask(call.session()?, CommandName::Clock, Value::Object(args)).await
}

/// `reticle_clock`, as the registry knows it.
pub struct Clock;

impl Tool for Clock {
    const NAME: ToolName = ToolName::Clock;
    const TITLE: &'static str = "Page clock";
    const EFFECT: Effect = Effect::Changes;
    const DESCRIPTION: &'static str =
        "Control the page's clock: freeze its timers, advance them, or reset to real time.";
    const SESSION: SessionUse = SessionUse::Bound;
    const DRIVES_SESSION: bool = true;
    type Args = ClockArgs;

    fn run<'a>(call: &'a Call<'a>, a: ClockArgs) -> Answer<'a> {
        Box::pin(clock(call, a))
    }
}
