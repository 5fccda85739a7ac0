//! A session's event ring buffer, bounded by count, age and bytes, with monotonic cursors. A
//! read from a cursor the buffer has evicted past says how many events it lost (`evicted`),
//! never a quietly shorter list. The bytes counted are what an event holds in memory (the larger
//! of its frame's size and its parsed data's [`footprint`]); one event past the whole bound keeps
//! its small fields and has each large one replaced by a note saying what was shed. This module
//! stores and reads; it must not decide what an event means.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Map, Value};

use super::footprint;
use crate::wire::EventType;

/// The buffer's bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingLimits {
    /// Most events held.
    pub max_events: usize,
    /// Oldest event held.
    pub max_age: Duration,
    /// Most bytes held (counted as what the events hold in memory).
    pub max_bytes: usize,
}

impl Default for RingLimits {
    fn default() -> Self {
        Self {
            max_events: 2000,
            max_age: Duration::from_secs(60),
            max_bytes: 8 * 1024 * 1024,
        }
    }
}

/// One stored event, restamped by the daemon.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredEvent {
    /// Position in this session life's stream: contiguous, never reused.
    pub seq: u64,
    /// Daemon milliseconds since this session life began.
    pub t: u64,
    /// The event type (unknown types verbatim).
    #[serde(rename = "type")]
    pub kind: EventType,
    /// The element ref the page gave, if any.
    #[serde(rename = "ref", skip_serializing_if = "Option::is_none")]
    pub element_ref: Option<String>,
    /// The page's payload.
    pub data: Map<String, Value>,
    /// The SDK's own sequence number, if it sent one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_seq: Option<u64>,
    /// What the event holds in memory (at least its frame's size), counted against the bound.
    #[serde(skip)]
    pub bytes: usize,
    #[serde(skip)]
    received: Option<Instant>,
}

impl StoredEvent {
    /// A stored event; `seq` and the receive time are set by [`Ring::push`]. `bytes` is the
    /// frame's size; what the parsed `data` holds counts when it is more.
    pub fn new(
        t: u64,
        kind: EventType,
        element_ref: Option<String>,
        data: Map<String, Value>,
        page_seq: Option<u64>,
        bytes: usize,
    ) -> Self {
        let bytes = bytes.max(footprint::of_map(&data));
        Self {
            seq: 0,
            t,
            kind,
            element_ref,
            data,
            page_seq,
            bytes,
            received: None,
        }
    }

    /// Replaces every field of `data` holding more than [`SHED_FIELD_BYTES`] with a note of its
    /// size, so an event past the ring's whole bound is kept without what made it so.
    fn shed_large_fields(&mut self) {
        for value in self.data.values_mut() {
            let held = footprint::of_value(value);
            if held > SHED_FIELD_BYTES {
                *value = Value::String(format!(
                    "<shed by the daemon: this field held {held} bytes in memory, past the session's event buffer bound>"
                ));
            }
        }
        self.bytes = footprint::of_map(&self.data);
    }
}

/// A field of an event past the ring's whole bound is shed when it holds more than this.
pub const SHED_FIELD_BYTES: usize = 4096;

/// What a read returns.
#[derive(Debug, Clone, PartialEq)]
pub struct RingRead {
    /// Events at or after the cursor that are still held, oldest first.
    pub events: Vec<StoredEvent>,
    /// How many events at or after the cursor were evicted before this read.
    pub evicted: u64,
    /// The cursor to read from next time.
    pub next: u64,
}

impl PartialEq for StoredEvent {
    fn eq(&self, other: &Self) -> bool {
        self.seq == other.seq
    }
}

/// The buffer itself.
#[derive(Debug)]
pub struct Ring {
    limits: RingLimits,
    events: VecDeque<StoredEvent>,
    bytes: usize,
    next_seq: u64,
    evicted_total: u64,
}

impl Ring {
    pub fn new(limits: RingLimits) -> Self {
        Self {
            limits,
            events: VecDeque::new(),
            bytes: 0,
            next_seq: 0,
            evicted_total: 0,
        }
    }

    /// Stores an event at `now`, evicting the oldest past any bound; returns its seq.
    pub fn push(&mut self, mut event: StoredEvent, now: Instant) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        event.seq = seq;
        event.received = Some(now);
        if event.bytes > self.limits.max_bytes {
            event.shed_large_fields();
        }
        self.bytes += event.bytes;
        self.events.push_back(event);
        while self.events.len() > self.limits.max_events
            || (self.bytes > self.limits.max_bytes && self.events.len() > 1)
        {
            self.evict_front();
        }
        self.expire(now);
        seq
    }

    /// The newest held event passing `which`.
    pub fn last_matching(&self, which: impl Fn(&StoredEvent) -> bool) -> Option<&StoredEvent> {
        self.events.iter().rev().find(|e| which(e))
    }

    /// Evicts events older than the age bound.
    pub fn expire(&mut self, now: Instant) {
        while let Some(front) = self.events.front() {
            let age = front
                .received
                .map_or(Duration::ZERO, |at| now.saturating_duration_since(at));
            if age <= self.limits.max_age || self.events.len() == 1 && age.is_zero() {
                break;
            }
            self.evict_front();
        }
    }

    fn evict_front(&mut self) {
        if let Some(old) = self.events.pop_front() {
            self.bytes -= old.bytes;
            self.evicted_total += 1;
        }
    }

    /// Events from `cursor` on (at most `limit`), and how many of them were evicted.
    pub fn read(&mut self, cursor: u64, limit: usize, now: Instant) -> RingRead {
        self.expire(now);
        let first_held = self.events.front().map_or(self.next_seq, |e| e.seq);
        let evicted = first_held.saturating_sub(cursor);
        let start = cursor.max(first_held);
        let skip = (start - first_held) as usize;
        let events: Vec<StoredEvent> = self.events.iter().skip(skip).take(limit).cloned().collect();
        let next = events
            .last()
            .map_or(start.min(self.next_seq), |e| e.seq + 1);
        RingRead {
            events,
            evicted,
            next,
        }
    }

    /// The cursor a read would start from to see only events after now.
    pub fn head(&self) -> u64 {
        self.next_seq
    }

    /// Events held, bytes held, and events evicted over the buffer's life.
    pub fn stats(&self) -> (usize, usize, u64) {
        (self.events.len(), self.bytes, self.evicted_total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::KnownEventType;

    fn event(bytes: usize) -> StoredEvent {
        StoredEvent::new(
            0,
            KnownEventType::Signal.into(),
            None,
            Map::new(),
            None,
            bytes,
        )
    }

    fn limits(max_events: usize, max_bytes: usize) -> RingLimits {
        RingLimits {
            max_events,
            max_age: Duration::from_secs(60),
            max_bytes,
        }
    }

    #[test]
    fn cursors_are_monotonic_and_a_read_past_eviction_says_how_many() {
        let now = Instant::now();
        let mut ring = Ring::new(limits(3, usize::MAX));
        for _ in 0..5 {
            ring.push(event(10), now);
        }
        // 0 and 1 were evicted; a read from 0 must say so.
        let read = ring.read(0, usize::MAX, now);
        assert_eq!(read.evicted, 2);
        assert_eq!(
            read.events.iter().map(|e| e.seq).collect::<Vec<_>>(),
            [2, 3, 4]
        );
        assert_eq!(read.next, 5);
        // Control: a read from a held cursor loses nothing.
        let read = ring.read(3, usize::MAX, now);
        assert_eq!(read.evicted, 0);
        assert_eq!(read.events.len(), 2);
        // A read at the head is empty and stays at the head.
        let read = ring.read(5, usize::MAX, now);
        assert!(read.events.is_empty());
        assert_eq!((read.evicted, read.next), (0, 5));
    }

    #[test]
    fn bytes_and_age_bound_the_buffer() {
        let now = Instant::now();
        let mut ring = Ring::new(limits(100, 25));
        for _ in 0..4 {
            ring.push(event(10), now);
        }
        assert_eq!(ring.stats().0, 2, "25 bytes hold two 10-byte events");
        assert_eq!(ring.read(0, usize::MAX, now).evicted, 2);

        let mut ring = Ring::new(RingLimits {
            max_age: Duration::from_secs(1),
            ..limits(100, usize::MAX)
        });
        ring.push(event(1), now);
        ring.push(event(1), now + Duration::from_millis(1500));
        let read = ring.read(0, usize::MAX, now + Duration::from_millis(1600));
        assert_eq!(read.evicted, 1);
        assert_eq!(read.events.len(), 1);
    }

    #[test]
    fn one_oversized_event_is_still_kept() {
        let now = Instant::now();
        let mut ring = Ring::new(limits(100, 5));
        ring.push(event(50), now);
        assert_eq!(ring.stats().0, 1);
    }

    #[test]
    fn what_is_held_is_bounded_by_memory_not_by_frame_size() {
        let now = Instant::now();
        let mut ring = Ring::new(limits(100, 1024 * 1024));
        let text = format!(
            "{{\"name\":\"flood\",\"zeros\":[{}0]}}",
            "0,".repeat(200_000)
        );
        let Value::Object(data) = serde_json::from_str::<Value>(&text).unwrap() else {
            panic!("an object")
        };
        for _ in 0..4 {
            let frame = text.len();
            ring.push(
                StoredEvent::new(
                    0,
                    KnownEventType::Signal.into(),
                    None,
                    data.clone(),
                    None,
                    frame,
                ),
                now,
            );
        }
        let (held, bytes, _) = ring.stats();
        assert!(bytes <= 1024 * 1024, "{bytes} bytes held");
        let read = ring.read(0, usize::MAX, now);
        let last = read.events.last().unwrap();
        assert_eq!(last.data["name"], "flood", "small fields are kept");
        assert!(
            last.data["zeros"].as_str().unwrap().starts_with("<shed"),
            "{held}"
        );
    }

    #[test]
    fn a_limited_read_continues_where_it_stopped() {
        let now = Instant::now();
        let mut ring = Ring::new(limits(100, usize::MAX));
        for _ in 0..10 {
            ring.push(event(1), now);
        }
        let first = ring.read(0, 4, now);
        assert_eq!(first.next, 4);
        let second = ring.read(first.next, 100, now);
        assert_eq!(second.events.first().map(|e| e.seq), Some(4));
        assert_eq!(second.next, 10);
    }
}
