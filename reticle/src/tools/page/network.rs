//! `reticle_network`: the page's requests in a window, newest first; a hint with totals when
//! none match. It reads only.

use std::collections::HashSet;

use serde_json::{Value, json};

use super::timeline::read;
use crate::tools::call::Call;
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::NetworkArgs;
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, SessionUse, Tool};
use crate::wire::KnownEventType as K;

fn network(call: &Call<'_>, a: NetworkArgs) -> Result<Value, Refusal> {
    let session = call.session()?;
    let read = read(
        call,
        session,
        a.since.as_deref(),
        a.action_id.as_deref(),
        None,
    )?;
    let done: HashSet<String> = read
        .events
        .iter()
        .filter(|e| e.kind == K::NetRequest)
        .filter_map(|e| e.data.get("id").map(Value::to_string))
        .collect();
    let mut all: Vec<Value> = Vec::new();
    for e in &read.events {
        let d = &e.data;
        match e.kind.known() {
            Some(K::NetRequest) => all.push(json!({
                "seq": e.seq, "t": e.t,
                "method": d.get("method"), "url": d.get("url"), "status": d.get("status"),
                "ok": d.get("ok"), "durationMs": d.get("durationMs"), "initiator": d.get("initiator"),
                "error": d.get("error"),
            })),
            Some(K::NetPending) if !d.get("id").map(Value::to_string).is_some_and(|i| done.contains(&i)) => {
                all.push(json!({
                    "seq": e.seq, "t": e.t, "method": d.get("method"), "url": d.get("url"),
                    "inFlight": true, "initiator": d.get("initiator"),
                }))
            }
            _ => {}
        }
    }
    let total = all.len();
    let matching: Vec<Value> = all
        .iter()
        .rev()
        .filter(|r| {
            let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("");
            a.method
                .as_ref()
                .is_none_or(|m| s("method").eq_ignore_ascii_case(m))
                && a.url_contains
                    .as_ref()
                    .is_none_or(|u| s("url").contains(u.as_str()))
                && a.status
                    .is_none_or(|st| r.get("status").and_then(Value::as_u64) == Some(u64::from(st)))
                && a.ok
                    .is_none_or(|ok| r.get("ok").and_then(Value::as_bool) == Some(ok))
        })
        .cloned()
        .collect();
    let count = matching.len();
    let mut answer = read.page("requests", matching, a.limit);
    if count == 0 {
        let present: Vec<String> = all
            .iter()
            .rev()
            .take(10)
            .map(|r| {
                format!(
                    "{} {} {}",
                    r.get("method").and_then(Value::as_str).unwrap_or("?"),
                    r.get("url").and_then(Value::as_str).unwrap_or("?"),
                    r.get("status")
                        .map(Value::to_string)
                        .unwrap_or_else(|| "in flight".into())
                )
            })
            .collect();
        answer["hint"] = json!({ "totalInWindow": total, "present": present });
    }
    Ok(answer)
}

/// `reticle_network`, as the registry knows it.
pub struct Network;

impl Tool for Network {
    const NAME: ToolName = ToolName::Network;
    const TITLE: &'static str = "Network requests";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str = "The page's requests (method, url, status, duration), newest first; a hint with totals when none match. Reads only.";
    const OUTPUT: &'static [&'static str] = &["requests", "count", "hint"];
    const SESSION: SessionUse = SessionUse::Bound;
    type Args = NetworkArgs;

    fn run<'a>(call: &'a Call<'a>, a: NetworkArgs) -> Answer<'a> {
        Box::pin(std::future::ready(network(call, a)))
    }
}
