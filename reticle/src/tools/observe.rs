//! Reading what the page reported: `reticle_observe` (the timeline with a summary and what was
//! lost), `reticle_network` and `reticle_console` (most recent first, a hint with totals when
//! nothing matches). A window is `since` a cursor, an action's window by `actionId`, or the last
//! `window_ms`; every read says what the window lost (evictions, a changed session life, gap
//! markers), so absence in a lossy window is never mistaken for absence in the app.

use std::collections::{BTreeMap, HashSet};

use serde_json::{Value, json};

use super::args::{ConsoleArgs, ConsoleLevel, NetworkArgs, ObserveArgs};
use super::call::Call;
use super::judging::cursor_arg;
use super::refusal::Refusal;
use crate::bridge::registry::MAX_READ_EVENTS;
use crate::bridge::ring::StoredEvent;
use crate::bridge::{Cursor, Session};
use crate::wire::{EventType, KnownEventType as K};

/// A read window's events and what it lost.
struct Read {
    events: Vec<StoredEvent>,
    lost: Value,
    next: Cursor,
    from: Cursor,
}

impl Read {
    /// The answer listing `matching` under `key` (at most `limit`, default 50), with the total,
    /// the window's cursors and what it lost.
    fn page(&self, key: &str, matching: Vec<Value>, limit: Option<u32>) -> Value {
        let count = matching.len();
        let shown: Vec<Value> = matching
            .into_iter()
            .take(limit.unwrap_or(50) as usize)
            .collect();
        json!({
            "ok": true,
            key: shown,
            "count": count,
            "from": self.from,
            "next": self.next,
            "lost": self.lost,
        })
    }
}

/// Reads the window a call names.
fn read(
    call: &Call<'_>,
    session: &Session,
    since: Option<&str>,
    action_id: Option<&str>,
    window_ms: Option<u64>,
) -> Result<Read, Refusal> {
    let tool = call.tool.as_str();
    let (from, until) = match (since, action_id) {
        (Some(_), Some(_)) => {
            return Err(Refusal::bad_arguments(
                tool,
                "give `since` or `actionId`, not both",
            ));
        }
        (Some(text), None) => (Some(cursor_arg(tool, "since", text)?), None),
        (None, Some(id)) => {
            let window = call.ctx.host.remember(session.id(), |m| m.action(id));
            let Some(window) = window else {
                let known: Vec<String> = call.ctx.host.remember(session.id(), |m| {
                    m.actions.iter().map(|(a, _)| a.clone()).collect()
                });
                return Err(Refusal::new(
                    format!(
                        "no action '{}' on this page; nothing was read",
                        super::bounds::clip(id, 40)
                    ),
                    "pass an actionId an act on this page returned, or a since cursor",
                )
                .with("actionIds", known));
            };
            (Some(window.since), window.until)
        }
        (None, None) => (None, None),
    };
    let read = session.events_since(from, MAX_READ_EVENTS);
    let now = session.clock_ms();
    let mut events: Vec<StoredEvent> = read
        .events
        .into_iter()
        .filter(|e| until.is_none_or(|u| u.life != session.life() || e.seq < u.seq))
        .collect();
    if from.is_none()
        && let Some(ms) = window_ms
    {
        let start = now.saturating_sub(ms);
        events.retain(|e| e.t >= start);
    }
    let gaps: Vec<u64> = events
        .iter()
        .filter(|e| e.kind == K::TransportOverflow)
        .map(|e| e.data.get("dropped").and_then(Value::as_u64).unwrap_or(0))
        .collect();
    let complete = read.evicted == 0 && !read.life_changed && gaps.is_empty();
    let mut lost = json!({ "complete": complete });
    if read.evicted > 0 {
        lost["evicted"] = json!(read.evicted);
    }
    if read.life_changed {
        lost["lifeChanged"] = json!(true);
        lost["note"] = json!(
            "the cursor is from an earlier connection of this page: what it reported in between is gone"
        );
    }
    if !gaps.is_empty() {
        lost["transportGaps"] = json!(gaps);
    }
    Ok(Read {
        events,
        lost,
        next: read.next,
        from: from.unwrap_or(Cursor {
            life: session.life(),
            seq: 0,
        }),
    })
}

fn event_value(e: &StoredEvent) -> Value {
    let mut v = json!({ "seq": e.seq, "t": e.t, "type": e.kind.as_str(), "data": e.data });
    if let Some(r) = &e.element_ref {
        v["ref"] = json!(r);
    }
    v
}

fn matches_filter(kind: &EventType, filters: &[String]) -> bool {
    let name = kind.as_str();
    filters.iter().any(|f| {
        let f = f.as_str();
        name == f
            || name.starts_with(&format!("{f}."))
            || (f == "error" && *kind == K::ErrorUncaught)
            || (f == "console" && *kind == K::ErrorUncaught)
            || (f == "page" && *kind == K::PageHealth)
    })
}

pub(super) fn observe(call: &Call<'_>, a: ObserveArgs) -> Result<Value, Refusal> {
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

pub(super) fn network(call: &Call<'_>, a: NetworkArgs) -> Result<Value, Refusal> {
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

pub(super) fn console(call: &Call<'_>, a: ConsoleArgs) -> Result<Value, Refusal> {
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
