import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRefRegistry } from '../src/dom/refs.js';
import { openTabStore } from '../src/storage.js';
import { StorageKey } from '../src/protocol.js';
import { makePage } from '../test-support/helpers.js';

function page() {
  const win = makePage('<!doctype html><body><button id="a">A</button><button id="b">B</button></body>');
  return { win, doc: win.document, store: openTabStore(win) };
}

test('one ref per element, unique across elements', () => {
  const { doc, store } = page();
  const refs = createRefRegistry({ store });
  const a = doc.getElementById('a');
  const b = doc.getElementById('b');
  const ra = refs.refFor(a);
  assert.equal(refs.refFor(a), ra);
  assert.notEqual(refs.refFor(b), ra);
  assert.equal(ra, 'e1');
  assert.equal(refs.resolve(ra).el, a);
});

test('a removed element is a named stale refusal, even when a twin takes its place', () => {
  const { doc, store } = page();
  const refs = createRefRegistry({ store });
  const a = doc.getElementById('a');
  const ref = refs.refFor(a);
  const twin = a.cloneNode(true); // same id, same text: a re-render
  a.replaceWith(twin);
  const r = refs.resolve(ref);
  assert.equal(r.ok, false);
  assert.equal(r.stale, true);
  assert.match(r.error, new RegExp(`ref '${ref}' is stale`));
  assert.notEqual(refs.refFor(twin), ref, 'the new occupant gets a new ref');
});

test('numbers are never reused within the page, and a reload continues after the reserved block', () => {
  const { win, doc, store } = page();
  const refs = createRefRegistry({ store });
  const seen = new Set();
  for (let i = 0; i < 250; i += 1) {
    const el = doc.createElement('span');
    doc.body.append(el);
    const r = refs.refFor(el);
    assert.ok(!seen.has(r));
    seen.add(r);
    el.remove();
  }
  assert.equal(win.sessionStorage.getItem(StorageKey.REF_BASE), '300');
  // reload: same tab storage, new registry
  const after = createRefRegistry({ store: openTabStore(win) });
  const fresh = after.refFor(doc.getElementById('b'));
  assert.equal(fresh, 'e301');
  const old = after.resolve('e5');
  assert.equal(old.ok, false);
  assert.match(old.error, /before this page was \(re\)loaded/);
});

test('without sessionStorage, numbering starts from the clock so a reload cannot restart at e1', () => {
  const win = makePage();
  Object.defineProperty(win, 'sessionStorage', { configurable: true, get() { throw new Error('SecurityError'); } });
  const store = openTabStore(win);
  const first = createRefRegistry({ store, wallNow: () => 1_000 });
  const second = createRefRegistry({ store: openTabStore(win), wallNow: () => 1_050 });
  const r1 = first.refFor(win.document.body);
  const r2 = second.refFor(win.document.body);
  assert.notEqual(r1, 'e1');
  assert.ok(Number(r2.slice(1)) > Number(r1.slice(1)) + 1000, `${r1} then ${r2}`);
});

test('bad, unissued and oversized refs are refused with reasons', () => {
  const { store } = page();
  const refs = createRefRegistry({ store });
  assert.match(refs.resolve('e99').error, /never issued/);
  assert.match(refs.resolve('button').error, /not a ref/);
  assert.match(refs.resolve(42).error, /must be a string/);
  const long = refs.resolve('e'.repeat(200));
  assert.equal(long.ok, false);
  assert.ok(!long.error.includes('e'.repeat(129)), 'an oversized ref is not echoed back');
});
