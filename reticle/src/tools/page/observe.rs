//! `reticle_observe`: the timeline the page reported in a window, with a summary and what the
//! window lost. It reads only.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::timeline::{event_value, matches_filter, read};
use crate::bridge::ring::StoredEvent;
use crate::tools::call::Call;
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::ObserveArgs;
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, SessionUse, Tool};

fn observe(call: &Call<'_>, a: ObserveArgs) -> Result<Value, Refusal> {
    let session = call.session()?;
    let window_ms = a
        .window_ms
        .or((a.since.is_none() && a.action_id.is_none()).then_some(2000));
    let read = read(
        call,
        session,
        a.since.as_deref(),
        a.action_id.as_deref(),
        window_ms,
    )?;
    let mut summary: BTreeMap<String, u64> = BTreeMap::new();
    let kept: Vec<&StoredEvent> = read
        .events
        .iter()
        .filter(|e| {
            a.filters
                .as_ref()
                .is_none_or(|f| matches_filter(&e.kind, f))
        })
        .collect();
    for e in &kept {
        *summary.entry(e.kind.as_str().to_string()).or_default() += 1;
    }
    let limit = a.limit.unwrap_or(200) as usize;
    let skip = kept.len().saturating_sub(limit);
    let events: Vec<Value> = kept.iter().skip(skip).map(|e| event_value(e)).collect();
    let mut answer = json!({
        "ok": true,
        "from": read.from,
        "next": read.next,
        "count": kept.len(),
        "events": events,
        "summary": summary,
        "lost": read.lost,
    });
    if skip > 0 {
        answer["truncated"] = json!(skip);
    }
    Ok(answer)
}

/// `reticle_observe`, as the registry knows it.
pub struct Observe;

impl Tool for Observe {
    const NAME: ToolName = ToolName::Observe;
    const TITLE: &'static str = "Observe events";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str = "The timeline the page reported (DOM, network, routes, console, signals) since a cursor or action, with a summary and what was lost. Reads only.";
    const OUTPUT: &'static [&'static str] = &["events", "summary", "lost", "next"];
    const SESSION: SessionUse = SessionUse::Bound;
    type Args = ObserveArgs;

    fn run<'a>(call: &'a Call<'a>, a: ObserveArgs) -> Answer<'a> {
        Box::pin(std::future::ready(observe(call, a)))
    }
}
