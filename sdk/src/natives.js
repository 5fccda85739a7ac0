// natives.js — the SDK's own clock and timers, captured before anything patches them.
//
// Owns: `captureClock(win)`, the object every SDK module uses for "now" and for scheduling.
// Must not: be replaced by the page's (possibly frozen, see commands/clock.js) timers; the SDK's
// heartbeat, reconnect backoff and settling keep real time even while the page's clock is frozen.
// Tests pass their own clock object with the same shape instead.

/**
 * @typedef {object} SdkClock
 * @property {() => number} now                 monotonic milliseconds
 * @property {(fn: Function, ms: number) => any} setTimeout
 * @property {(handle: any) => void} clearTimeout
 * @property {(fn: Function, ms: number) => any} setInterval
 * @property {(handle: any) => void} clearInterval
 */

/** @returns {SdkClock} */
export function captureClock(win = globalThis) {
  const perf = win.performance && typeof win.performance.now === 'function' ? win.performance : null;
  const perfNow = perf ? perf.now.bind(perf) : null;
  const dateNow = Date.now.bind(Date);
  const st = (win.setTimeout || globalThis.setTimeout).bind(win.setTimeout ? win : globalThis);
  const ct = (win.clearTimeout || globalThis.clearTimeout).bind(win.clearTimeout ? win : globalThis);
  const si = (win.setInterval || globalThis.setInterval).bind(win.setInterval ? win : globalThis);
  const ci = (win.clearInterval || globalThis.clearInterval).bind(win.clearInterval ? win : globalThis);
  return {
    now: perfNow ? () => perfNow() : () => dateNow(),
    wallNow: () => dateNow(),
    setTimeout: (fn, ms) => st(fn, ms),
    clearTimeout: (h) => ct(h),
    setInterval: (fn, ms) => si(fn, ms),
    clearInterval: (h) => ci(h),
  };
}
