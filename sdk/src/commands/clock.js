// commands/clock.js — the page's clock under agent control: freeze, advance, reset.
//
// Owns: `createPageClock(win)`. Freezing replaces the page's `Date`, `performance.now`,
// `setTimeout`/`setInterval` (and their clears) with virtual ones; `advance(ms)` moves virtual
// time and runs the timers that fall due, in order; `reset()` restores the natives and hands
// still-pending virtual timers back to the real clock with their remaining delay.
// Must not: touch the SDK's own timers (captured earlier in natives.js), or lose a page timer.
// Known limit: timers the page scheduled *before* the freeze keep running in real time.

import { CommandLimits } from '../protocol.js';

const VIRTUAL_ID_BASE = 1e9;

export function createPageClock(win) {
  const natives = {
    Date: win.Date,
    setTimeout: win.setTimeout,
    clearTimeout: win.clearTimeout,
    setInterval: win.setInterval,
    clearInterval: win.clearInterval,
    perfNow: win.performance ? win.performance.now : null,
  };
  let frozen = false;
  let wallAt = 0; // virtual Date.now()
  let perfAt = 0; // virtual performance.now()
  let nextId = VIRTUAL_ID_BASE;
  /** @type {Map<number, {due: number, fn: Function, args: any[], every: number | null}>} */
  const timers = new Map();

  function virtualNow() {
    return wallAt;
  }

  function install() {
    const NativeDate = natives.Date;
    function FrozenDate(...args) {
      if (!new.target) return new NativeDate(virtualNow()).toString();
      return args.length ? new NativeDate(...args) : new NativeDate(virtualNow());
    }
    FrozenDate.prototype = NativeDate.prototype;
    FrozenDate.now = () => virtualNow();
    FrozenDate.parse = NativeDate.parse;
    FrozenDate.UTC = NativeDate.UTC;
    win.Date = FrozenDate;
    if (win.performance && natives.perfNow) {
      try {
        win.performance.now = () => perfAt;
      } catch {
        // read-only in some engines
      }
    }
    const add = (fn, ms, args, every) => {
      nextId += 1;
      const delay = Math.max(0, Number(ms) || 0);
      timers.set(nextId, { due: perfAt + delay, fn, args, every: every ? Math.max(1, delay) : null, order: nextId });
      return nextId;
    };
    win.setTimeout = (fn, ms, ...args) => add(fn, ms, args, false);
    win.setInterval = (fn, ms, ...args) => add(fn, ms, args, true);
    const clear = (id) => {
      if (timers.has(id)) timers.delete(id);
      else natives.clearTimeout.call(win, id);
    };
    win.clearTimeout = clear;
    win.clearInterval = (id) => {
      if (timers.has(id)) timers.delete(id);
      else natives.clearInterval.call(win, id);
    };
  }

  function restore() {
    win.Date = natives.Date;
    if (win.performance && natives.perfNow) {
      try {
        delete win.performance.now;
        if (win.performance.now !== natives.perfNow) win.performance.now = natives.perfNow;
      } catch {
        // ignore
      }
    }
    win.setTimeout = natives.setTimeout;
    win.clearTimeout = natives.clearTimeout;
    win.setInterval = natives.setInterval;
    win.clearInterval = natives.clearInterval;
  }

  function run(timer) {
    const fn = timer.fn;
    if (typeof fn === 'function') {
      try {
        fn(...timer.args);
      } catch (err) {
        // report like a real timer would: as an uncaught error on the window
        natives.setTimeout.call(win, () => {
          throw err;
        }, 0);
      }
    }
  }

  return {
    get frozen() {
      return frozen;
    },
    now: () => (frozen ? wallAt : natives.Date.now()),
    pending: () => timers.size,
    freeze() {
      if (frozen) return;
      wallAt = natives.Date.now();
      perfAt = natives.perfNow ? natives.perfNow.call(win.performance) : 0;
      install();
      frozen = true;
    },
    /** @returns {number} how many timer callbacks ran */
    advance(ms) {
      if (!frozen) this.freeze();
      const target = perfAt + ms;
      let fired = 0;
      for (;;) {
        let next = null;
        for (const [id, t] of timers) if (t.due <= target && (!next || t.due < next[1].due || (t.due === next[1].due && t.order < next[1].order))) next = [id, t];
        if (!next || fired >= CommandLimits.CLOCK_MAX_FIRINGS_PER_ADVANCE) break;
        const [id, t] = next;
        wallAt += t.due - perfAt;
        perfAt = t.due;
        if (t.every) {
          t.due += t.every;
          nextId += 1;
          t.order = nextId;
        } else timers.delete(id);
        run(t);
        fired += 1;
      }
      wallAt += target - perfAt;
      perfAt = target;
      return fired;
    },
    reset() {
      if (!frozen) return 0;
      restore();
      frozen = false;
      const handedBack = timers.size;
      for (const t of timers.values()) {
        const remaining = Math.max(0, t.due - perfAt);
        if (t.every) natives.setTimeout.call(win, () => { natives.setInterval.call(win, t.fn, t.every, ...t.args); t.fn(...t.args); }, remaining);
        else natives.setTimeout.call(win, t.fn, remaining, ...t.args);
      }
      timers.clear();
      return handedBack;
    },
  };
}

/** The `clock` command: `{reset:true}` or `{freeze?:true, advanceMs?:number}`. */
export function runClock(ctx, args = {}) {
  const clock = ctx.pageClock;
  if (args.reset === true) {
    const handedBack = clock.reset();
    return { ok: true, result: { frozen: false, handedBack } };
  }
  if (args.advanceMs !== undefined) {
    const ms = args.advanceMs;
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0 || ms > CommandLimits.CLOCK_MAX_ADVANCE_MS) {
      return { ok: false, error: `clock advanceMs must be a number from 0 to ${CommandLimits.CLOCK_MAX_ADVANCE_MS}` };
    }
    const fired = clock.advance(ms);
    return { ok: true, result: { frozen: true, now: clock.now(), fired, pending: clock.pending() } };
  }
  if (args.freeze === true) {
    clock.freeze();
    return { ok: true, result: { frozen: true, now: clock.now(), pending: clock.pending() } };
  }
  if (args.freeze === false) {
    clock.reset();
    return { ok: true, result: { frozen: false } };
  }
  return { ok: false, error: 'clock needs one of {freeze:true}, {advanceMs:<ms>} or {reset:true}' };
}
