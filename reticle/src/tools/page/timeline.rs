//! The window a timeline read covers (`since` a cursor, an action's window by `actionId`, or the
//! last `window_ms`) and what it lost (evictions, a changed session life, gap markers), shared
//! by observe, network and console so absence in a lossy window is never taken for absence in
//! the app. It must not answer a tool.

use serde_json::{Value, json};

use crate::bridge::registry::MAX_READ_EVENTS;
use crate::bridge::ring::StoredEvent;
use crate::bridge::{Cursor, Session};
use crate::tools::call::Call;
use crate::tools::judging::cursor_arg;
use crate::tools::refusal::Refusal;
use crate::wire::{EventType, KnownEventType as K};

/// A read window's events and what it lost.
pub(super) struct Read {
    pub(super) events: Vec<StoredEvent>,
    pub(super) lost: Value,
    pub(super) next: Cursor,
    pub(super) from: Cursor,
}

impl Read {
    /// The answer listing `matching` under `key` (at most `limit`, default 50), with the total,
    /// the window's cursors and what it lost.
    pub(super) fn page(&self, key: &str, matching: Vec<Value>, limit: Option<u32>) -> Value {
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
pub(super) fn read(
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
                        crate::tools::bounds::clip(id, 40)
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

pub(super) fn event_value(e: &StoredEvent) -> Value {
    let mut v = json!({ "seq": e.seq, "t": e.t, "type": e.kind.as_str(), "data": e.data });
    if let Some(r) = &e.element_ref {
        v["ref"] = json!(r);
    }
    v
}

pub(super) fn matches_filter(kind: &EventType, filters: &[String]) -> bool {
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
