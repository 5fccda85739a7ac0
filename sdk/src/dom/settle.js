// dom/settle.js — "has the page gone quiet?" after an action.
//
// Owns: `watchMutations(doc)` (a counter of DOM changes under the document, own UI excluded) and
// `waitForQuiet({clock, mutations, pendingRequests, quietMs, maxMs})`, which resolves
// `{settled:true, settleReason:null}` once no DOM change happened for `quietMs` and no request is
// in flight, or `{settled:false, settleReason:'timeout'}` at `maxMs`; and `waitForTask({win, clock,
// maxMs})`: the action's microtasks, then one task (`settled:true`), or `maxMs` on the SDK clock
// when no task runs (`settled:false`).
// Must not: use the page's timers (a frozen page clock would hang it); it uses the SDK clock.

import { OWN_UI_ATTR } from '../protocol.js';

export function watchMutations(doc) {
  let count = 0;
  const Observer = doc.defaultView && doc.defaultView.MutationObserver;
  if (!Observer) return { get count() { return 0; }, stop() {} };
  const observer = new Observer((records) => {
    for (const record of records) {
      const target = record.target.nodeType === 1 ? record.target : record.target.parentElement;
      if (target && target.closest && target.closest(`[${OWN_UI_ATTR}]`)) continue;
      count += 1;
    }
  });
  observer.observe(doc, { subtree: true, childList: true, attributes: true, characterData: true });
  return {
    get count() {
      return count;
    },
    stop() {
      count += observer.takeRecords().length;
      observer.disconnect();
    },
  };
}

export function waitForQuiet({ clock, mutations, pendingRequests = () => 0, quietMs, maxMs }) {
  return new Promise((resolve) => {
    const start = clock.now();
    let seen = mutations.count;
    let lastChange = start;
    const step = Math.max(1, Math.min(quietMs, 16));
    function tick() {
      const now = clock.now();
      if (mutations.count !== seen) {
        seen = mutations.count;
        lastChange = now;
      }
      if (now - lastChange >= quietMs && pendingRequests() === 0) {
        resolve({ settled: true, settleReason: null });
        return;
      }
      if (now - start >= maxMs) {
        resolve({ settled: false, settleReason: 'timeout' });
        return;
      }
      clock.setTimeout(tick, step);
    }
    clock.setTimeout(tick, Math.min(step, quietMs));
  });
}

export function waitForTask({ win, clock, maxMs }) {
  return Promise.resolve().then(
    () =>
      new Promise((resolve) => {
        let done = false;
        const finish = (settled) => {
          if (done) return;
          done = true;
          resolve({ settled, settleReason: settled ? null : 'timeout' });
        };
        const timer = clock.setTimeout(() => finish(false), maxMs);
        const settledNow = () => {
          clock.clearTimeout(timer);
          finish(true);
        };
        // A posted message is a task a hidden tab does not throttle, unlike a timer.
        const Channel = win && typeof win.MessageChannel === 'function' ? win.MessageChannel : null;
        if (!Channel) {
          clock.setTimeout(settledNow, 0);
          return;
        }
        const channel = new Channel();
        channel.port1.onmessage = () => {
          channel.port1.close();
          settledNow();
        };
        channel.port2.postMessage(null);
      }),
  );
}
