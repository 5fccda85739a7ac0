import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toWireValue, redactUrl, encodeFrame, REDACTED, CIRCULAR, TRUNCATED } from '../src/serialize.js';

test('redacts sensitive keys at any depth', () => {
  const out = toWireValue({ user: 'ann', password: 'hunter2', nested: { accessToken: 'abc', apiKey: 'k' }, token: '' });
  assert.equal(out.user, 'ann');
  assert.equal(out.password, REDACTED);
  assert.equal(out.nested.accessToken, REDACTED);
  assert.equal(out.nested.apiKey, REDACTED);
  assert.equal(out.token, '', 'empty values carry no secret');
});

test('cycles, depth, non-finite numbers, bigint, dates, errors and getters that throw', () => {
  const a = { n: NaN, big: 10n, when: new Date(0), err: new TypeError('bad') };
  a.self = a;
  Object.defineProperty(a, 'boom', { enumerable: true, get() { throw new Error('nope'); } });
  const out = toWireValue(a);
  assert.equal(out.n, null);
  assert.equal(out.big, '10');
  assert.equal(out.when, '1970-01-01T00:00:00.000Z');
  assert.deepEqual(out.err, { name: 'TypeError', message: 'bad' });
  assert.equal(out.self, CIRCULAR);
  assert.match(out.boom, /unreadable/);
  let deep = {};
  const root = deep;
  for (let i = 0; i < 20; i += 1) deep = deep.next = {};
  const cut = JSON.stringify(toWireValue(root));
  assert.ok(cut.includes(TRUNCATED));
});

test('collections are capped', () => {
  const out = toWireValue(Array.from({ length: 500 }, (_, i) => i));
  assert.equal(out.length, 201);
  assert.match(out[200], /300 more/);
});

test('redactUrl hides sensitive query values only', () => {
  assert.equal(redactUrl('http://h/p?reticleToken=abc&x=1#f'), `http://h/p?reticleToken=${REDACTED}&x=1#f`);
  assert.equal(redactUrl('http://h/p'), 'http://h/p');
});

test('encodeFrame refuses frames above 1 MiB', () => {
  assert.equal(encodeFrame({ a: 'x'.repeat(2 * 1024 * 1024) }), null);
  assert.equal(typeof encodeFrame({ a: 1 }), 'string');
});
