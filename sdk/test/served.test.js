// src/served.js: a page that imported the SDK from the daemon pairs through /sdk/pairing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { leavesPairing, pairThenConnect, servedBy } from '../src/served.js';

test('servedBy reads the serving daemon off a loopback /sdk/ URL and nothing else', () => {
  assert.deepEqual(servedBy('http://127.0.0.1:4400/sdk/0.1.0-abc/reticle.js'), {
    port: 4400,
    pairing: 'http://127.0.0.1:4400/sdk/pairing',
  });
  assert.equal(servedBy('http://localhost:4401/sdk/x/reticle.js').port, 4401);
  for (const other of [
    'http://localhost:5173/src/reticle.js',
    'https://cdn.example.com/sdk/reticle.js',
    'file:///home/me/sdk/reticle.js',
    'not a url',
  ]) {
    assert.equal(servedBy(other), null, other);
  }
});

test('only a connect() with no token, port or url leaves the pairing to the daemon', () => {
  assert.equal(leavesPairing({ session: 'tab' }), true);
  assert.equal(leavesPairing({}), true);
  assert.equal(leavesPairing({ token: 't' }), false);
  assert.equal(leavesPairing({ port: 4400 }), false);
  assert.equal(leavesPairing({ url: 'ws://127.0.0.1:4400/reticle' }), false);
});

test('pairThenConnect connects with the token the daemon gave, and warns when it refuses', async () => {
  const served = servedBy('http://127.0.0.1:4400/sdk/t/reticle.js');
  let connected = null;
  const warnings = [];
  const answer = pairThenConnect({
    served,
    options: { session: 'tab' },
    connectNow: (options) => {
      connected = options;
      return { ok: true };
    },
    fetchImpl: async (url) => {
      assert.equal(url, 'http://127.0.0.1:4400/sdk/pairing');
      return { ok: true, json: async () => ({ token: 'secret' }) };
    },
    warn: (line) => warnings.push(line),
  });
  assert.deepEqual(answer, { ok: true, pending: 'pairing', port: 4400 });
  for (let i = 0; i < 50 && !connected; i++) await new Promise((r) => setImmediate(r));
  assert.deepEqual(connected, { session: 'tab', port: 4400, token: 'secret' });
  assert.deepEqual(warnings, []);

  pairThenConnect({
    served,
    options: {},
    connectNow: () => assert.fail('no connect without a token'),
    fetchImpl: async () => ({ ok: false, status: 403 }),
    warn: (line) => warnings.push(line),
  });
  for (let i = 0; i < 50 && warnings.length === 0; i++) await new Promise((r) => setImmediate(r));
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /HTTP 403/);
});
