// The public module (reticle.js) and the optional badge.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as reticle from '../reticle.js';
import { createReticle } from '../src/core.js';
import { makePage, startDaemonStandIn, waitFor, WebSocket } from '../test-support/helpers.js';

test('the module exports the documented API, and nothing it does throws outside a browser', () => {
  for (const name of ['connect', 'disconnect', 'signal', 'registerStore', 'status', 'createReticle']) {
    assert.equal(typeof reticle[name], 'function', name);
  }
  assert.equal(typeof reticle.default.connect, 'function');
  // Node has no document: a refusal with a reason, not an exception
  const out = reticle.connect({ port: 4400 });
  assert.equal(out.ok, false);
  assert.match(out.reason, /no window\/document/);
  assert.equal(reticle.registerStore('app', () => ({})).ok, true);
  assert.equal(reticle.registerStore('app', 'not a function').ok, false);
  assert.equal(reticle.signal('x', { a: 1 }).ok, true);
  assert.equal(reticle.disconnect().ok, true);
});

test('present:true mounts a badge that snapshots, queries and DOM events never see', async (t) => {
  const daemon = await startDaemonStandIn();
  const win = makePage('<!doctype html><html><head><title>T</title></head><body><button>Real</button></body></html>');
  for (const level of ['log', 'info', 'debug', 'warn', 'error']) win.console[level] = () => {};
  const sdk = createReticle({ win, WebSocketImpl: WebSocket, random: () => 0.5 });
  t.after(async () => {
    sdk.disconnect();
    await daemon.close();
  });
  sdk.connect({ port: daemon.port });
  assert.ok(win.document.querySelector('[data-reticle-ui]'), 'badge mounted');
  const conn = await waitFor(() => daemon.connections[0]?.frames[0] && daemon.connections[0]);
  const snap = await daemon.command(conn, 'snapshot', {});
  assert.equal(snap.result.tree, 'button "Real" e1');
  const narrate = await daemon.command(conn, 'narrate', { text: 'checking the login' });
  assert.equal(narrate.result.shown, true);
  const presenter = await daemon.command(conn, 'presenter', { state: 'paused', text: 'waiting' });
  assert.equal(presenter.ok, true);
  const flows = await daemon.command(conn, 'flows', { flows: [{ name: 'login' }] });
  assert.equal(flows.result.applied, true);
  const caps = await daemon.command(conn, 'capabilities', {});
  assert.deepEqual(caps.result.flows, [{ name: 'login', steps: [] }]);
  assert.ok(!daemon.events().some((e) => e.type.startsWith('dom.')), 'the badge updates made no DOM events');
  sdk.disconnect();
  assert.equal(win.document.querySelector('[data-reticle-ui]'), null, 'badge removed on disconnect');
});
