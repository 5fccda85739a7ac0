//! The verdict as a tool answers it: the predicate an argument names ([`predicate_of`], parsed
//! strictly, no verdict when it does not parse), where a check's window starts, the verdict
//! written out, and the digest of what the app did in a window. Shared by every tool that
//! judges; it must not act on a page or wait.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::call::Call;
use super::refusal::Refusal;
use crate::bridge::{Cursor, Session};
use crate::verdict::predicate::Predicate;
use crate::verdict::{Verdict, Window};
use crate::wire::{EventFamily, KnownEventType as K};

/// Parses a predicate argument strictly; a predicate that does not parse produces no verdict.
pub fn predicate_of(tool: &str, field: &str, value: &Value) -> Result<Predicate, Refusal> {
    crate::verdict::parse(value).map_err(|e| {
        Refusal::new(
            format!("{tool}: `{field}` is not a predicate Reticle can evaluate: {e}; nothing was run and no verdict was made"),
            format!("fix `{field}` (the message lists what its kind accepts) and call again"),
        )
        .with("field", field)
        .with("at", e.at.clone())
        .with("accepts", e.accepted.clone())
    })
}

/// Reads a `since` cursor argument.
pub fn cursor_arg(tool: &str, field: &str, text: &str) -> Result<Cursor, Refusal> {
    text.parse::<Cursor>().map_err(|problem| {
        Refusal::bad_arguments(
            tool,
            &format!("field `{field}`: {problem}; pass the `since` or `next` a tool returned"),
        )
    })
}

/// Where a check's window starts: `since`, else the last act on this page, else its start.
pub fn window_start(
    call: &Call<'_>,
    session: &Session,
    since: Option<&str>,
) -> Result<Cursor, Refusal> {
    match since {
        Some(text) => cursor_arg(call.tool.as_str(), "since", text),
        None => Ok(call
            .ctx
            .host
            .remember(session.id(), |m| m.last_act)
            .unwrap_or(Cursor {
                life: session.life(),
                seq: 0,
            })),
    }
}

/// A verdict as tools return it.
pub fn verdict_value(verdict: &Verdict) -> Value {
    let mut value = json!({
        "ok": true,
        "verified": verdict.verified,
        "reason": verdict.reason,
        "because": verdict.because,
        "evidence": verdict.evidence,
    });
    if !verdict.lost.is_empty() {
        value["lost"] = json!(verdict.lost);
    }
    if let Some(advice) = &verdict.advice {
        value["advice"] = json!(advice);
    }
    value
}

/// Counts of what the app did in a window.
pub fn digest(window: &Window) -> Value {
    let mut by_type: BTreeMap<&str, u64> = BTreeMap::new();
    let mut signals: Vec<&str> = Vec::new();
    let (mut net, mut failed, mut dom, mut console_errors) = (0, 0, 0u64, 0);
    let mut route = None;
    for e in &window.events {
        *by_type.entry(e.kind.as_str()).or_default() += 1;
        match e.kind.known() {
            Some(K::NetRequest) => {
                net += 1;
                let ok = e.data.get("ok").and_then(Value::as_bool).unwrap_or(true);
                if !ok {
                    failed += 1;
                }
            }
            Some(K::Signal) => {
                if let Some(name) = e.data.get("name").and_then(Value::as_str)
                    && !signals.contains(&name)
                    && signals.len() < 20
                {
                    signals.push(name);
                }
            }
            Some(K::ConsoleError | K::ErrorUncaught) => console_errors += 1,
            Some(K::RouteChange) => route = e.data.get("to").cloned(),
            _ if e.kind.in_family(EventFamily::Dom) => {
                dom += e.data.get("count").and_then(Value::as_u64).unwrap_or(1);
            }
            _ => {}
        }
    }
    let mut value = json!({
        "events": window.events.len(),
        "net": { "total": net, "failed": failed },
        "consoleErrors": console_errors,
        "signals": signals,
        "domChanges": dom,
        "byType": by_type,
    });
    if let Some(route) = route {
        value["route"] = route;
    }
    value
}
