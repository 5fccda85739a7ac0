import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openTabStore, resolveSessionId } from '../src/storage.js';
import { StorageKey } from '../src/protocol.js';
import { makePage } from '../test-support/helpers.js';

function pageWithThrowingGetter() {
  const win = makePage();
  Object.defineProperty(win, 'sessionStorage', {
    configurable: true,
    get() {
      const err = new Error("Failed to read the 'sessionStorage' property from 'Window': The document is sandboxed");
      err.name = 'SecurityError';
      throw err;
    },
  });
  return win;
}

test('uses sessionStorage and keeps the session id across a reload of the same tab', () => {
  const win = makePage();
  const first = resolveSessionId({ win, store: openTabStore(win) });
  assert.equal(first.ok, true);
  assert.equal(first.source, 'generated');
  assert.match(first.sessionId, /^s[0-9a-f-]{36}$/);
  // a reload: same sessionStorage, new document, new store object
  const again = resolveSessionId({ win, store: openTabStore(win) });
  assert.equal(again.sessionId, first.sessionId);
  assert.equal(again.source, 'sessionStorage');
});

test('an explicit session wins and is written back', () => {
  const win = makePage();
  const store = openTabStore(win);
  const r = resolveSessionId({ explicit: 'tab-1', win, store });
  assert.equal(r.sessionId, 'tab-1');
  assert.equal(win.sessionStorage.getItem(StorageKey.SESSION_ID), 'tab-1');
  assert.equal(resolveSessionId({ explicit: 'auto', win, store }).sessionId, 'tab-1');
});

test('the __reticle_session URL parameter is honoured', () => {
  const win = makePage(undefined, { url: 'http://127.0.0.1:5173/?__reticle_session=lease-7' });
  assert.equal(resolveSessionId({ win, store: openTabStore(win) }).sessionId, 'lease-7');
});

test('a sessionStorage getter that throws (sandboxed iframe) falls back to memory without throwing', () => {
  const win = pageWithThrowingGetter();
  const store = openTabStore(win);
  assert.equal(store.persistent, false);
  assert.match(store.failure, /SecurityError/);
  const r = resolveSessionId({ win, store });
  assert.equal(r.ok, true);
  assert.match(r.sessionId, /^s/);
  assert.equal(resolveSessionId({ win, store }).sessionId, r.sessionId, 'stable within the document');
});

test('getItem/setItem that throw also fall back to memory', () => {
  const win = makePage();
  const throwing = {
    getItem() {
      throw new Error('denied');
    },
    setItem() {
      throw new Error('denied');
    },
    removeItem() {
      throw new Error('denied');
    },
  };
  Object.defineProperty(win, 'sessionStorage', { configurable: true, get: () => throwing });
  const store = openTabStore(win);
  assert.equal(store.persistent, false);
  store.set('k', 'v');
  assert.equal(store.get('k'), 'v');
});

test('setItem failing after the probe (quota) keeps the value in memory', () => {
  const win = makePage();
  const store = openTabStore(win);
  const original = Object.getOwnPropertyDescriptor(win.Storage.prototype, 'setItem');
  Object.defineProperty(win.Storage.prototype, 'setItem', {
    configurable: true,
    value() {
      throw new Error('QuotaExceededError');
    },
  });
  try {
    store.set('x', '1');
    assert.equal(store.get('x'), '1');
  } finally {
    Object.defineProperty(win.Storage.prototype, 'setItem', original);
  }
});

test('an invalid explicit session is refused with a reason', () => {
  const win = makePage();
  const r = resolveSessionId({ explicit: 'x'.repeat(129), win, store: openTabStore(win) });
  assert.equal(r.ok, false);
  assert.match(r.reason, /1\.\.128/);
});
