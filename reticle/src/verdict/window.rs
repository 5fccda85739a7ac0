//! An observation window: the events the page reported from a cursor on, and what was lost from
//! it (an SDK gap marker: events dropped in transport; ring eviction: events the daemon no longer
//! holds). Loss is data here, so a verdict can never mistake missing evidence for absence.

use serde::Serialize;
use serde_json::Value;

use crate::wire::{EventType, KnownEventType};

/// One event as the evaluator sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ObservedEvent {
    /// The daemon's cursor for this event (monotonic within a session).
    pub cursor: u64,
    /// Milliseconds on the session's clock.
    pub t: u64,
    /// The protocol 1 event type (`signal`, `net.request`, `console.error`, `route.change`, ...).
    pub kind: EventType,
    pub data: Value,
}

/// Evidence that the window is incomplete.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "lost", rename_all = "snake_case")]
pub enum CaptureLoss {
    /// The SDK dropped events while offline and said so with a gap marker.
    TransportGap { dropped: u64 },
    /// The daemon's ring buffer evicted events from the window before they were read.
    BufferLoss { evicted: u64 },
    /// The page's connection dropped and came back inside the window (a new session life):
    /// whatever it reported in between may be gone.
    Reconnected { from_life: u64, to_life: u64 },
}

impl CaptureLoss {
    pub fn word(&self) -> &'static str {
        match self {
            CaptureLoss::TransportGap { .. } => "transport_gap",
            CaptureLoss::BufferLoss { .. } => "buffer_loss",
            CaptureLoss::Reconnected { .. } => "transport_gap",
        }
    }
}

/// Events of a window, oldest first, with what was lost from it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Window {
    pub events: Vec<ObservedEvent>,
    pub losses: Vec<CaptureLoss>,
    /// Milliseconds since the last event, as of the read (for `settled`).
    pub quiet_for_ms: u64,
}

impl Window {
    /// Builds a window, turning gap markers into losses; `evicted` is what the buffer dropped.
    pub fn new(events: Vec<ObservedEvent>, evicted: u64, quiet_for_ms: u64) -> Self {
        let mut losses = Vec::new();
        if evicted > 0 {
            losses.push(CaptureLoss::BufferLoss { evicted });
        }
        let mut kept = Vec::with_capacity(events.len());
        for event in events {
            if event.kind == KnownEventType::TransportOverflow {
                let dropped = event
                    .data
                    .get("dropped")
                    .and_then(Value::as_u64)
                    .unwrap_or(0);
                losses.push(CaptureLoss::TransportGap { dropped });
            } else {
                kept.push(event);
            }
        }
        Self {
            events: kept,
            losses,
            quiet_for_ms,
        }
    }

    /// Events of one type.
    pub fn of(&self, kind: KnownEventType) -> impl Iterator<Item = &ObservedEvent> {
        self.events.iter().filter(move |e| e.kind == kind)
    }

    pub fn is_clean(&self) -> bool {
        self.losses.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn gap_markers_and_evictions_become_losses() {
        let events = vec![
            ObservedEvent {
                cursor: 1,
                t: 1,
                kind: KnownEventType::TransportOverflow.into(),
                data: json!({"dropped": 7}),
            },
            ObservedEvent {
                cursor: 2,
                t: 2,
                kind: KnownEventType::Signal.into(),
                data: json!({"name": "s"}),
            },
        ];
        let window = Window::new(events, 3, 0);
        assert_eq!(window.events.len(), 1);
        assert_eq!(
            window.losses,
            vec![
                CaptureLoss::BufferLoss { evicted: 3 },
                CaptureLoss::TransportGap { dropped: 7 }
            ]
        );
        assert!(!window.is_clean());
    }
}
