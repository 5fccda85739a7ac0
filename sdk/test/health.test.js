import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';
import { observeHealth } from '../src/observers/health.js';

/** A visible page whose visibility the test sets, and the health events it reports. */
function rig() {
  const { window: win } = new JSDOM('<!doctype html><p>x</p>', { pretendToBeVisual: true });
  let state = 'visible';
  Object.defineProperty(win.document, 'visibilityState', { get: () => state });
  Object.defineProperty(win.document, 'hidden', { get: () => state === 'hidden' });
  const events = [];
  const clock = { setInterval: () => 0, clearInterval: () => {} };
  const stop = observeHealth({ win, clock, emit: (type, data) => events.push({ type, data }) });
  const turn = (next) => {
    state = next;
    win.document.dispatchEvent(new win.Event('visibilitychange'));
  };
  return { win, events, stop, turn };
}

test('a tab that goes to the background is reported hidden (control for the unload case)', () => {
  const { events, stop, turn } = rig();
  assert.equal(events[0].data.reason, 'initial');
  assert.equal(events[0].data.hidden, false);
  turn('hidden');
  assert.deepEqual(events.at(-1).data.hidden, true);
  assert.equal(events.at(-1).data.reason, 'visibilitychange');
  stop();
});

test('a document on its way out (pagehide, then hidden) reports nothing until it is shown again', () => {
  const { win, events, stop, turn } = rig();
  const before = events.length;
  win.dispatchEvent(new win.Event('pagehide'));
  turn('hidden');
  win.dispatchEvent(new win.Event('blur'));
  assert.equal(events.length, before, 'an unloading document says nothing about the tab');
  // Restored from the back-forward cache: it reports at once, and again on changes.
  turn('visible');
  win.dispatchEvent(new win.Event('pageshow'));
  assert.equal(events.at(-1).data.reason, 'pageshow');
  assert.equal(events.at(-1).data.hidden, false);
  turn('hidden');
  assert.equal(events.at(-1).data.hidden, true);
  stop();
});
