// observers/route.js — client-side navigation (history API, hash, back/forward), as events.
//
// Owns: wrapping `history.pushState`/`replaceState` and listening for `popstate` and `hashchange`;
// emitting `route.change {from, to, pathname, search, hash, trigger}` whenever the URL changed.
// Must not: change what the app's history calls do or return; URLs are redacted before leaving.

import { EventType } from '../protocol.js';
import { redactUrl } from '../serialize.js';

export function observeRoute({ win, emit }) {
  let last = win.location.href;
  let active = true;
  const restores = [];

  function check(trigger) {
    if (!active) return;
    const now = win.location.href;
    if (now === last) return;
    const from = last;
    last = now;
    try {
      emit(EventType.ROUTE_CHANGE, {
        from: redactUrl(from),
        to: redactUrl(now),
        pathname: win.location.pathname,
        search: redactUrl(win.location.search),
        hash: win.location.hash,
        trigger,
      });
    } catch {
      // never break navigation
    }
  }

  const history = win.history;
  for (const method of ['pushState', 'replaceState']) {
    const original = history && history[method];
    if (typeof original !== 'function') continue;
    const wrapped = function reticleHistory(...args) {
      const out = original.apply(this, args);
      check(method);
      return out;
    };
    history[method] = wrapped;
    restores.push(() => {
      if (history[method] === wrapped) history[method] = original;
    });
  }
  const onPop = () => check('popstate');
  const onHash = () => check('hashchange');
  win.addEventListener('popstate', onPop);
  win.addEventListener('hashchange', onHash);

  return function stop() {
    active = false;
    for (const restore of restores) restore();
    win.removeEventListener('popstate', onPop);
    win.removeEventListener('hashchange', onHash);
  };
}
