// observers/health.js — the `page.health` heartbeat: is the tab visible and focused.
//
// Owns: one `page.health {hidden, focused, reason}` event at start ("initial"), every
// HEALTH_INTERVAL_MS ("heartbeat"), and on visibilitychange / focus / blur. Nothing between
// `pagehide` and `pageshow`: a document being unloaded turns hidden on its way out (a reload or a
// navigation), which says nothing about the tab the next document will show in.
// Must not: use the page's timers (the page clock may be frozen); it uses the SDK clock.

import { EventType, HEALTH_INTERVAL_MS } from '../protocol.js';

export function observeHealth({ win, emit, clock, intervalMs = HEALTH_INTERVAL_MS }) {
  const doc = win.document;
  let leaving = false;
  function report(reason) {
    if (leaving) return;
    let focused = false;
    try {
      focused = typeof doc.hasFocus === 'function' ? doc.hasFocus() : false;
    } catch {
      focused = false;
    }
    emit(EventType.PAGE_HEALTH, { hidden: doc.visibilityState === 'hidden' || Boolean(doc.hidden), focused, reason });
  }
  const onVisibility = () => report('visibilitychange');
  const onFocus = () => report('focus');
  const onBlur = () => report('blur');
  const onPageHide = () => {
    leaving = true;
  };
  const onPageShow = () => {
    leaving = false;
    report('pageshow');
  };
  doc.addEventListener('visibilitychange', onVisibility);
  win.addEventListener('focus', onFocus);
  win.addEventListener('blur', onBlur);
  win.addEventListener('pagehide', onPageHide);
  win.addEventListener('pageshow', onPageShow);
  report('initial');
  const timer = clock.setInterval(() => report('heartbeat'), intervalMs);
  return function stop() {
    clock.clearInterval(timer);
    doc.removeEventListener('visibilitychange', onVisibility);
    win.removeEventListener('focus', onFocus);
    win.removeEventListener('blur', onBlur);
    win.removeEventListener('pagehide', onPageHide);
    win.removeEventListener('pageshow', onPageShow);
  };
}
