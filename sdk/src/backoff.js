// backoff.js — how long to wait before the next connection attempt.
//
// Owns: `createBackoff({baseMs, capMs, random})`: exponential growth from `baseMs`, capped at
// `capMs`, with jitter that keeps each delay inside [ceiling/2, ceiling]; unbounded in count.
// Must not: schedule anything or read the clock; the transport owns timers.

import { Transport } from './protocol.js';

export function createBackoff({
  baseMs = Transport.BACKOFF_BASE_MS,
  capMs = Transport.BACKOFF_CAP_MS,
  random = Math.random,
} = {}) {
  let attempt = 0;

  function ceilingFor(n) {
    // 2 ** n overflows to Infinity long after it passed the cap; Math.min handles that.
    return Math.min(capMs, baseMs * 2 ** n);
  }

  function jittered(ceiling) {
    let r = Number(random());
    if (!Number.isFinite(r) || r < 0) r = 0;
    if (r > 1) r = 1;
    return Math.round(ceiling / 2 + (ceiling / 2) * r);
  }

  return {
    /** The delay before the next attempt; each call grows the next ceiling. */
    next() {
      const delay = jittered(ceilingFor(attempt));
      attempt += 1;
      return delay;
    },
    /** From now on every delay sits at the cap (used after a refusal such as close 1008). */
    toCap() {
      attempt = Math.max(attempt, Math.ceil(Math.log2(Math.max(1, capMs / baseMs))));
    },
    /** Back to the first, shortest delay (after a connection was established). */
    reset() {
      attempt = 0;
    },
    get attempt() {
      return attempt;
    },
    ceilingFor,
    baseMs,
    capMs,
  };
}
