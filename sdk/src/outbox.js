// outbox.js — the offline queue: events waiting for a socket, and an honest count of the lost.
//
// Owns: `createOutbox({limit, isChurn})`. A bounded FIFO of encoded event frames. When full, the
// oldest churn (low-value) event goes first; only when no churn is left does the oldest other
// event go. Every loss is counted with the stamp of the earliest lost event so the transport can
// send one gap marker before the backlog.
// Must not: reorder what it keeps, send anything, or hold command results (a result for a command
// sent over a dead socket has already been answered by the daemon as lost).

import { CHURN_EVENT_TYPES, Transport } from './protocol.js';

/**
 * @typedef {object} QueuedEvent
 * @property {string} text  the encoded frame
 * @property {string} type  event type
 * @property {number} t     SDK event time (ms)
 * @property {number} seq   SDK event sequence number
 */

/** Adds one lost event to a gap record (creating it when null); returns the record. */
export function addToGap(gap, entry) {
  const g = gap || { dropped: 0, firstDropT: entry.t, firstDropSeq: entry.seq, lastDropSeq: entry.seq };
  g.dropped += 1;
  if (entry.t < g.firstDropT) g.firstDropT = entry.t;
  if (entry.seq < g.firstDropSeq) g.firstDropSeq = entry.seq;
  if (entry.seq > g.lastDropSeq) g.lastDropSeq = entry.seq;
  return g;
}

/** Merges two gap records (either may be null). */
export function mergeGaps(a, b) {
  if (!a) return b ? { ...b } : null;
  if (!b) return { ...a };
  return {
    dropped: a.dropped + b.dropped,
    firstDropT: Math.min(a.firstDropT, b.firstDropT),
    firstDropSeq: Math.min(a.firstDropSeq, b.firstDropSeq),
    lastDropSeq: Math.max(a.lastDropSeq, b.lastDropSeq),
  };
}

export function createOutbox({ limit = Transport.QUEUE_LIMIT, isChurn = (type) => CHURN_EVENT_TYPES.has(type) } = {}) {
  /** @type {QueuedEvent[]} */
  let items = [];
  let gap = null;

  function noteDrop(entry) {
    gap = addToGap(gap, entry);
  }

  /** Makes room for one more entry; returns false when `incoming` itself must be dropped. */
  function makeRoom(incoming) {
    const churnAt = items.findIndex((queued) => isChurn(queued.type));
    if (churnAt >= 0) {
      noteDrop(items[churnAt]);
      items.splice(churnAt, 1);
      return true;
    }
    if (incoming && isChurn(incoming.type)) return false;
    noteDrop(items.shift());
    return true;
  }

  return {
    /** Queues an event; returns false when the incoming event itself was the one dropped. */
    push(entry) {
      if (limit <= 0) {
        noteDrop(entry);
        return false;
      }
      if (items.length >= limit && !makeRoom(entry)) {
        noteDrop(entry);
        return false;
      }
      items.push(entry);
      return true;
    },
    /**
     * Puts back entries that were sent on a socket the daemon closed before it was established
     * (they are older than anything queued since), and the gap that was sent with them.
     */
    restore(entries, sentGap) {
      items = entries.concat(items);
      while (items.length > limit) makeRoom(null);
      if (sentGap) gap = mergeGaps(gap, sentGap);
    },
    /** Everything queued, oldest first; the queue is empty afterwards. */
    drain() {
      const out = items;
      items = [];
      return out;
    },
    /** The loss since the last call (or null), then forgets it. */
    takeGap() {
      const out = gap;
      gap = null;
      return out;
    },
    peekGap() {
      return gap ? { ...gap } : null;
    },
    get size() {
      return items.length;
    },
    get limit() {
      return limit;
    },
  };
}
