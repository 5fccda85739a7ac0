// The fixture app (apps/e2e) run in jsdom against its HTTP contract (apps/e2e/dev-server.mjs)
// and a stand-in daemon: every observer and command the gates rely on, driven over the wire.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { JSDOM, VirtualConsole } from 'jsdom';
import { startFixtureServer } from '../../apps/e2e/dev-server.mjs';
import { startApp, TIMER_MS } from '../../apps/e2e/app.js';
import { startFrame } from '../../apps/e2e/iframe.js';
import { createReticle } from '../src/core.js';
import { startDaemonStandIn, waitFor, WebSocket } from '../test-support/helpers.js';

function rawStatus(port, path) {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on('error', reject);
    req.end();
  });
}

async function openFixture(t, { session = 'fx-1', token = 'tok-fixture' } = {}) {
  const server = await startFixtureServer();
  const daemon = await startDaemonStandIn();
  const url = `${server.origin}/?reticlePort=${daemon.port}&reticleToken=${token}&session=${session}`;
  const virtualConsole = new VirtualConsole();
  const jsdomErrors = [];
  virtualConsole.on('jsdomError', (e) => jsdomErrors.push(e));
  const dom = await JSDOM.fromURL(url, { pretendToBeVisual: true, virtualConsole });
  const win = dom.window;
  win.fetch = (input, init) => fetch(new URL(String(input), server.origin), init);
  const sdk = createReticle({ win, WebSocketImpl: WebSocket, settle: { quietMs: 5, maxMs: 2000 }, random: () => 0.5 });
  const app = startApp(win, sdk);
  t.after(async () => {
    sdk.disconnect();
    await daemon.close();
    await server.close();
    win.close();
  });
  const conn = await waitFor(() => daemon.connections[0]?.frames[0] && daemon.connections[0], { what: 'hello' });
  const cmd = async (name, args) => daemon.command(conn, name, args);
  const ref = async (query) => {
    const r = await cmd('query', query);
    assert.equal(r.ok, true, r.error);
    assert.ok(r.result.elements.length > 0, `nothing matches ${JSON.stringify(query)}`);
    return r.result.elements[0].ref;
  };
  const events = (type) => daemon.events().filter((e) => e.type === type);
  const signals = (name) => events('signal').filter((e) => e.data.name === name);
  const fault = (body) => fetch(`${server.origin}/api/fault`, { method: 'POST', body: JSON.stringify(body) }).then((r) => r.json());
  return { server, daemon, win, sdk, app, conn, cmd, ref, events, signals, fault, jsdomErrors };
}

test('the HTTP contract: static roots, JS MIME type, CORS for the sandboxed frame, API errors', async (t) => {
  const server = await startFixtureServer();
  t.after(() => server.close());
  const get = (path) => fetch(`${server.origin}${path}`);
  const index = await get('/');
  assert.equal(index.status, 200);
  assert.match(index.headers.get('content-type'), /^text\/html/);
  for (const path of ['/app.js', '/config.js', '/iframe.js', '/sdk/reticle.js', '/sdk/src/core.js']) {
    const res = await get(path);
    assert.equal(res.status, 200, path);
    assert.match(res.headers.get('content-type'), /^text\/javascript/, path);
    assert.equal(res.headers.get('access-control-allow-origin'), '*', path);
  }
  assert.equal((await get('/nope.js')).status, 404);
  assert.equal((await get('/sdk/node_modules/ws/package.json')).status, 404);
  // a raw request line (fetch would normalise the dots away before sending)
  const traversal = await rawStatus(server.port, '/sdk/../../../etc/passwd');
  assert.equal(traversal, 404);
  assert.deepEqual(await (await get('/api/health')).json(), { ok: true });
  const post = (path, body) => fetch(`${server.origin}${path}`, { method: 'POST', body });
  assert.equal((await post('/api/login', 'not json')).status, 400);
  assert.equal((await post('/api/login', '{"user":""}')).status, 400);
  assert.equal((await post('/api/fault', '{"mode":"sideways"}')).status, 400);
  assert.equal((await post('/api/fault', '{"mode":"slow","delayMs":-1}')).status, 400);
  assert.equal((await get('/api/login')).status, 405);
});

test('every module the pages import resolves on the server as JavaScript (the browser module graph)', async (t) => {
  const server = await startFixtureServer();
  t.after(() => server.close());
  const seen = new Set();
  const pending = [];
  const importsOf = (text) => Array.from(text.matchAll(/(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\s+['"]([^'"]+)['"]/g), (m) => m[1] || m[2]);
  for (const page of ['/', '/iframe.html']) {
    const html = await (await fetch(`${server.origin}${page}`)).text();
    for (const spec of importsOf(html)) pending.push(new URL(spec, `${server.origin}${page}`).href);
  }
  while (pending.length) {
    const href = pending.pop();
    if (seen.has(href)) continue;
    seen.add(href);
    const res = await fetch(href);
    assert.equal(res.status, 200, href);
    assert.match(res.headers.get('content-type'), /^text\/javascript/, href);
    for (const spec of importsOf(await res.text())) {
      assert.ok(spec.startsWith('.') || spec.startsWith('/'), `bare specifier '${spec}' in ${href} would not load in a browser`);
      pending.push(new URL(spec, href).href);
    }
  }
  assert.ok(seen.size > 20, `walked ${seen.size} modules`);
});

test('fixture: connects from its query string, with the token kept out of the reported URL', async (t) => {
  const fx = await openFixture(t);
  const hello = fx.conn.frames[0];
  assert.equal(hello.sessionId, 'fx-1');
  assert.equal(hello.token, 'tok-fixture');
  assert.match(hello.url, /reticleToken=\[REDACTED\]/);
  assert.equal(hello.title, 'Reticle fixture app');
  assert.equal(hello.hasCapabilities, true, 'the app registered its store before the socket opened');
  assert.equal(fx.win.document.querySelector('[data-testid=sdk-status]').textContent, 'SDK connected as fx-1');
  assert.equal(fx.win.document.querySelectorAll('[data-testid^=row-]').length, 200 + 1, '200 rows (+ the row-list itself)');
});

test('fixture: login succeeds (network, signal, store), then fails under an injected 500, then is slow', async (t) => {
  const fx = await openFixture(t);
  await fx.cmd('act', { ref: await fx.ref({ label: 'Username' }), action: 'fill', args: { value: 'ann' } });
  await fx.cmd('act', { ref: await fx.ref({ label: 'Password' }), action: 'fill', args: { value: 'pw' } });
  const submitRef = await fx.ref({ role: 'button', name: 'Sign in' });
  const click = await fx.cmd('act', { ref: submitRef, action: 'click' });
  assert.equal(click.ok, true, click.error);
  await waitFor(() => fx.signals('login.succeeded').length === 1, { what: 'login.succeeded' });
  const [request] = fx.events('net.request');
  assert.deepEqual([request.data.method, request.data.url, request.data.status, request.data.ok], ['POST', `${fx.server.origin}/api/login`, 200, true]);
  assert.ok(fx.events('net.pending').some((p) => p.data.id === request.data.id));
  const user = await fx.cmd('state_read', { store: 'app', path: 'user' });
  assert.equal(user.result.value, 'ann');

  await fx.fault({ mode: 'error' });
  await fx.cmd('act', { ref: submitRef, action: 'click' });
  await waitFor(() => fx.signals('login.failed').length === 1, { what: 'login.failed' });
  assert.equal(fx.events('net.request')[1].data.status, 500);
  const alert = await fx.cmd('query', { role: 'alert' });
  assert.equal(alert.result.elements[0].name, 'Sign-in failed (HTTP 500)');
  assert.equal(alert.result.elements[0].visible, true);

  await fx.fault({ mode: 'slow', delayMs: 300 });
  const slow = await fx.cmd('act', { ref: submitRef, action: 'click' });
  assert.equal(slow.result.settled, true, 'act waits for the request in flight');
  await waitFor(() => fx.signals('login.succeeded').length === 2);
  assert.ok(fx.events('net.request')[2].data.durationMs >= 300, 'the slow answer took at least its injected delay');
});

test('fixture: route change, console error, uncaught error, counter store and signals', async (t) => {
  const fx = await openFixture(t);
  await fx.cmd('act', { ref: await fx.ref({ testid: 'nav-details' }), action: 'click' });
  await waitFor(() => fx.events('route.change').length === 1);
  const route = fx.events('route.change')[0].data;
  assert.match(route.to, /view=details/);
  assert.match(route.to, /reticlePort=\d+/, 'the route keeps the daemon config for a reload');
  const snap = await fx.cmd('snapshot', { scope: '[data-testid=view-panel]' });
  assert.match(snap.result.tree, /heading "Details"/);
  assert.equal((await fx.cmd('state_read', { store: 'app', path: 'view' })).result.value, 'details');

  await fx.cmd('act', { ref: await fx.ref({ testid: 'log-error' }), action: 'click' });
  await fx.cmd('act', { ref: await fx.ref({ testid: 'throw-uncaught' }), action: 'click' });
  await waitFor(() => fx.events('console.error').length === 1 && fx.events('error.uncaught').length === 1, { what: 'console error + uncaught' });
  assert.equal(fx.events('console.error')[0].data.message, 'fixture: deliberate console error');
  assert.equal(fx.events('error.uncaught')[0].data.message, 'fixture: deliberate uncaught error');

  const inc = await fx.ref({ testid: 'counter-increment' });
  await fx.cmd('act_sequence', { steps: [{ ref: inc, action: 'click' }, { ref: inc, action: 'click' }] });
  assert.equal((await fx.cmd('state_read', { store: 'app', path: 'counter' })).result.value, 2);
  assert.deepEqual(fx.signals('counter.changed').map((s) => s.data.data.value), [1, 2]);
  const missing = await fx.cmd('state_read', { store: 'app', path: 'settings.nope' });
  assert.deepEqual(missing.result.availableKeys, ['theme', 'notifications']);
  const caps = await fx.cmd('capabilities', {});
  assert.ok(caps.result.signals.includes('counter.changed'));
  assert.ok(caps.result.testids.includes('rerender'));
});

test('fixture: a re-render makes the held ref stale; the new target is never clicked through it', async (t) => {
  const fx = await openFixture(t);
  const oldRef = await fx.ref({ testid: 'rerender-target' });
  await fx.cmd('act', { ref: await fx.ref({ testid: 'rerender' }), action: 'click' });
  const stale = await fx.cmd('act', { ref: oldRef, action: 'click' });
  assert.equal(stale.ok, false);
  assert.match(stale.error, new RegExp(`ref '${oldRef}' is stale`));
  assert.equal(fx.app.state.targetClicks, 0);
  const freshRef = await fx.ref({ testid: 'rerender-target' });
  assert.notEqual(freshRef, oldRef);
  assert.equal((await fx.cmd('act', { ref: freshRef, action: 'click' })).ok, true);
  assert.equal(fx.app.state.targetClicks, 1);
});

test('fixture: the destructive button needs confirmDangerous; hover, select, check, dblclick, dialog', async (t) => {
  const fx = await openFixture(t);
  const del = await fx.ref({ testid: 'delete-item' });
  const blocked = await fx.cmd('act', { ref: del, action: 'click' });
  assert.match(blocked.error, /destructive/);
  assert.equal(fx.app.state.items.length, 3);
  assert.equal((await fx.cmd('act', { ref: del, action: 'click', args: { confirmDangerous: true } })).ok, true);
  assert.equal(fx.app.state.items.length, 2);

  await fx.cmd('act', { ref: await fx.ref({ testid: 'hover-target' }), action: 'hover' });
  assert.equal((await fx.cmd('query', { role: 'tooltip' })).result.elements[0].visible, true);
  await fx.cmd('act', { ref: await fx.ref({ label: 'Colour' }), action: 'select', args: { value: 'Blue' } });
  assert.equal(fx.win.document.querySelector('[data-testid=colour]').value, 'blue');
  await fx.cmd('act', { ref: await fx.ref({ role: 'checkbox', name: 'Subscribe' }), action: 'check' });
  assert.equal((await fx.cmd('match', { query: { testid: 'subscribe' }, state: { checked: true } })).result.matched, true);
  await fx.cmd('act', { ref: await fx.ref({ testid: 'dblclick-target' }), action: 'dblclick' });
  assert.equal((await fx.cmd('query', { text: 'Double-clicked' })).result.count, 1);
  await fx.cmd('act', { ref: await fx.ref({ testid: 'open-dialog' }), action: 'click' });
  const status = await fx.cmd('snapshot', { mode: 'status' });
  assert.equal(status.result.status.visibleDialogs.length, 1);
});

test('fixture: with the page clock frozen, the 5 s timer fires only when the clock is advanced', async (t) => {
  const fx = await openFixture(t);
  assert.equal((await fx.cmd('clock', { freeze: true })).result.frozen, true);
  await fx.cmd('act', { ref: await fx.ref({ testid: 'timer-start' }), action: 'click' });
  await fx.cmd('clock', { advanceMs: TIMER_MS - 1 });
  assert.equal(fx.win.document.querySelector('[data-testid=timer-status]').textContent, 'Timer running');
  const adv = await fx.cmd('clock', { advanceMs: 1 });
  assert.equal(adv.result.fired, 1);
  assert.equal(fx.win.document.querySelector('[data-testid=timer-status]').textContent, 'Timer fired');
  await waitFor(() => fx.signals('timer.fired').length === 1);
  assert.equal((await fx.cmd('clock', { reset: true })).result.frozen, false);
});

test('fixture: the sandboxed frame connects with an in-memory session from its parent\'s message', async (t) => {
  const daemon = await startDaemonStandIn();
  const dom = new JSDOM('<!doctype html><p data-testid="frame-status"></p><button data-testid="frame-button">Frame button</button>', {
    url: 'http://127.0.0.1:1/iframe.html',
  });
  const win = dom.window;
  Object.defineProperty(win, 'sessionStorage', {
    configurable: true,
    get() {
      throw new win.DOMException('The document is sandboxed and lacks the allow-same-origin flag.', 'SecurityError');
    },
  });
  const sdk = createReticle({ win, WebSocketImpl: WebSocket, random: () => 0.5 });
  t.after(async () => {
    sdk.disconnect();
    await daemon.close();
  });
  startFrame(win, sdk);
  assert.equal(win.document.querySelector('[data-testid=frame-status]').textContent, '');
  // the parent's postMessage (in jsdom this window is its own parent)
  win.dispatchEvent(new win.MessageEvent('message', { source: win, data: { type: 'reticle-config', reticlePort: daemon.port, reticleToken: 't', session: 'fx-1-frame' } }));
  const hello = await waitFor(() => daemon.connections[0]?.frames[0]);
  assert.equal(hello.sessionId, 'fx-1-frame');
  assert.match(win.document.querySelector('[data-testid=frame-status]').textContent, /Frame connected as fx-1-frame \(storage: memory\)/);
});
