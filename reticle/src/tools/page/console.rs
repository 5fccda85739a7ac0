//! `reticle_console`: the page's console messages and uncaught errors in a window, newest first;
//! a hint with totals when none match. It reads only.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::timeline::read;
use crate::tools::call::Call;
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::{ConsoleArgs, ConsoleLevel};
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, SessionUse, Tool};
use crate::wire::KnownEventType as K;

fn console(call: &Call<'_>, a: ConsoleArgs) -> Result<Value, Refusal> {
    let session = call.session()?;
    let read = read(
        call,
        session,
        a.since.as_deref(),
        a.action_id.as_deref(),
        None,
    )?;
    let mut by_level: BTreeMap<&str, u64> = BTreeMap::new();
    let mut all = Vec::new();
    for e in &read.events {
        if let Some(level) = e.kind.known().and_then(K::console_level) {
            *by_level.entry(level).or_default() += 1;
            all.push((level, e));
        }
    }
    let wanted = a.level.map(ConsoleLevel::as_str);
    let matching: Vec<Value> = all
        .iter()
        .rev()
        .filter(|(level, _)| wanted.is_none_or(|w| w == *level))
        .map(|(level, e)| {
            json!({
                "seq": e.seq, "t": e.t, "level": level, "type": e.kind.as_str(),
                "message": e.data.get("message"),
                "source": e.data.get("source"),
            })
        })
        .collect();
    let count = matching.len();
    let mut answer = read.page("messages", matching, a.limit);
    if count == 0 {
        answer["hint"] = json!({ "totalInWindow": all.len(), "byLevel": by_level });
    }
    Ok(answer)
}

/// `reticle_console`, as the registry knows it.
pub struct Console;

impl Tool for Console {
    const NAME: ToolName = ToolName::Console;
    const TITLE: &'static str = "Console messages";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str = "The page's console messages and uncaught errors, newest first; a hint with totals when none match. Reads only.";
    const OUTPUT: &'static [&'static str] = &["messages", "count", "hint"];
    const SESSION: SessionUse = SessionUse::Bound;
    type Args = ConsoleArgs;

    fn run<'a>(call: &'a Call<'a>, a: ConsoleArgs) -> Answer<'a> {
        Box::pin(std::future::ready(console(call, a)))
    }
}
