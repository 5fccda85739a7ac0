// The whole SDK (createReticle) in a jsdom page against a real WebSocket server standing in for
// the daemon: hello, the command round trip over the wire, observers, and the console contract.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { createReticle } from '../src/core.js';
import { captureClock } from '../src/natives.js';
import { makePage, manualClock, startDaemonStandIn, waitFor, WebSocket } from '../test-support/helpers.js';

const BODY = `
  <form data-testid="login-form"><input aria-label="User" data-testid="user"><button data-testid="submit">Sign in</button></form>
  <button data-testid="rerender">Re-render</button><div data-testid="slot"><button data-testid="target">Target</button></div>`;

function page(url = 'http://127.0.0.1:5173/?reticlePort=1&reticleToken=abc123&session=t1') {
  return makePage(`<!doctype html><html><head><title>Fixture app</title></head><body>${BODY}</body></html>`, { url });
}

/** Silences jsdom's console while keeping a record of what reached it. */
function quietConsole(win) {
  const lines = [];
  for (const level of ['log', 'info', 'debug', 'warn', 'error']) win.console[level] = (...args) => lines.push({ level, text: args.join(' ') });
  return lines;
}

async function connected(t, { win = page(), clock = captureClock(globalThis), options = {} } = {}) {
  const daemon = await startDaemonStandIn();
  const consoleLines = quietConsole(win);
  const sdk = createReticle({ win, WebSocketImpl: WebSocket, clock, settle: { quietMs: 0, maxMs: 50 }, random: () => 0.5 });
  const status = sdk.connect({ port: daemon.port, token: 'tok-123', present: false, ...options });
  t.after(async () => {
    sdk.disconnect();
    await daemon.close();
  });
  assert.equal(status.ok, true, status.reason);
  const conn = await waitFor(() => daemon.connections[0]?.frames.length && daemon.connections[0], { what: 'hello' });
  return { win, daemon, sdk, conn, status, consoleLines };
}

const eventsOf = (daemon, type) => daemon.events().filter((e) => e.type === type);

test('hello: protocol 1, session id persisted per tab, token, redacted url, title', async (t) => {
  const { win, conn, status } = await connected(t, { options: { session: undefined } });
  const hello = conn.frames[0];
  assert.deepEqual(Object.keys(hello), ['kind', 'protocolVersion', 'sessionId', 'url', 'title', 'adapters', 'token', 'hasCapabilities', 'sdkVersion', 'contract']);
  assert.equal(hello.kind, 'hello');
  assert.equal(hello.protocolVersion, 1);
  assert.equal(hello.sessionId, status.sessionId);
  assert.equal(win.sessionStorage.getItem('__reticle_session'), status.sessionId);
  assert.equal(hello.token, 'tok-123');
  assert.equal(hello.url, 'http://127.0.0.1:5173/?reticlePort=1&reticleToken=[REDACTED]&session=t1');
  assert.equal(hello.title, 'Fixture app');
  assert.deepEqual(hello.adapters, []);
  const health = await waitFor(() => eventsOf({ events: () => conn.frames.filter((f) => f.kind === 'event').map((f) => f.event) }, 'page.health')[0]);
  assert.equal(health.data.reason, 'initial');
  assert.equal(health.sessionId, status.sessionId);
});

test('connect refuses bad options with a reason and never throws', () => {
  const win = page();
  quietConsole(win);
  const sdk = createReticle({ win, WebSocketImpl: WebSocket });
  assert.match(sdk.connect({ port: 0 }).reason, /port must be an integer/);
  assert.match(sdk.connect({ url: 'ws://example.com:4400/reticle' }).reason, /localhost-only/);
  assert.match(sdk.connect({ url: 'http://127.0.0.1:1/reticle' }).reason, /ws: or wss:/);
  assert.match(sdk.connect({ token: 'x'.repeat(600) }).reason, /token/);
  assert.match(sdk.connect({ session: '' }).reason, /session must be/);
  assert.match(sdk.connect(null).reason, /options object/);
  assert.equal(sdk.disconnect().wasConnected, false);
});

test('in a sandboxed frame whose sessionStorage getter throws, a session still starts', async (t) => {
  const win = page('http://127.0.0.1:5173/iframe.html');
  Object.defineProperty(win, 'sessionStorage', {
    configurable: true,
    get() {
      throw new win.DOMException('The document is sandboxed and lacks the allow-same-origin flag.', 'SecurityError');
    },
  });
  const { conn, status, consoleLines } = await connected(t, { win, options: { session: undefined } });
  assert.equal(status.storage, 'memory');
  assert.equal(conn.frames[0].kind, 'hello');
  assert.equal(conn.frames[0].sessionId, status.sessionId);
  assert.equal(consoleLines.filter((l) => l.text.includes('in memory only')).length, 1);
});

test('commands over the wire: snapshot, query, act, stale ref refusal, state_read, unknown, foreign session', async (t) => {
  const { win, daemon, conn, sdk } = await connected(t);
  sdk.registerStore('app', () => ({ user: { name: 'ann' }, counter: 3 }));
  const snap = await daemon.command(conn, 'snapshot', { mode: 'interactive' });
  assert.equal(snap.ok, true);
  assert.match(snap.result.tree, /button "Sign in" e\d+ \[testid=submit\]/);
  const q = await daemon.command(conn, 'query', { testid: 'target' });
  const targetRef = q.result.elements[0].ref;
  win.document.querySelector('[data-testid=slot]').innerHTML = '<button data-testid="target">Target</button>';
  const stale = await daemon.command(conn, 'act', { ref: targetRef, action: 'click' });
  assert.equal(stale.ok, false);
  assert.match(stale.error, new RegExp(`ref '${targetRef}' is stale`));
  const userRef = (await daemon.command(conn, 'query', { label: 'User' })).result.elements[0].ref;
  const fill = await daemon.command(conn, 'act', { ref: userRef, action: 'fill', args: { value: 'ann' } });
  assert.equal(fill.ok, true);
  assert.equal(fill.result.dispatched, true);
  assert.equal(win.document.querySelector('[data-testid=user]').value, 'ann');
  const state = await daemon.command(conn, 'state_read', { store: 'app', path: 'user.nope' });
  assert.equal(state.result.found, false);
  assert.deepEqual(state.result.availableKeys, ['name']);
  const unknown = await daemon.command(conn, 'teleport', {});
  assert.deepEqual(unknown, { kind: 'command_result', id: unknown.id, ok: false, error: "unknown command 'teleport'" });
  const foreign = await daemon.command(conn, 'snapshot', {}, { sessionId: 's-someone-else' });
  assert.equal(foreign.ok, false);
  assert.match(foreign.error, /addressed to session 's-someone-else'/);
  daemon.send(conn, '{"kind":"command","id":"broken-1","name":');
  const broken = await waitFor(() => daemon.results().find((r) => r.id === 'broken-1'));
  assert.equal(broken.ok, false);
  daemon.send(conn, 'garbage without an id');
  const caps = await daemon.command(conn, 'capabilities', {});
  assert.deepEqual(caps.result.stores, ['app']);
  assert.ok(caps.result.testids.includes('login-form'));
});

test('query over the wire answers from the DOM as it is now, also after a disconnect and a new connect', async (t) => {
  const { win, daemon, conn, sdk } = await connected(t);
  const doc = win.document;
  const names = async (c, args) => (await daemon.command(c, 'query', args)).result.elements.map((e) => e.name);
  assert.deepEqual(await names(conn, { role: 'button', name: 'Target' }), ['Target']);
  doc.querySelector('[data-testid=slot]').insertAdjacentHTML('beforeend', '<button data-testid="target">Target two</button>');
  assert.deepEqual(await names(conn, { role: 'button', name: 'Target', exact: false }), ['Target', 'Target two']);
  assert.deepEqual(await names(conn, { testid: 'target' }), ['Target', 'Target two']);
  sdk.disconnect();
  doc.querySelector('[data-testid=slot]').replaceChildren(); // while no cache is watching
  assert.equal(sdk.connect({ port: daemon.port, token: 'tok-123', present: false }).ok, true);
  const again = await waitFor(() => daemon.connections[1]?.frames.length && daemon.connections[1], { what: 'the second hello' });
  assert.deepEqual(await names(again, { testid: 'target' }), []);
  assert.deepEqual(await names(again, { role: 'button', name: 'Target' }), []);
  doc.querySelector('[data-testid=slot]').innerHTML = '<button data-testid="target">Target three</button>';
  assert.deepEqual(await names(again, { testid: 'target' }), ['Target three']);
});

test('console observer: all levels reported; uncaught errors and rejections; the SDK never reports itself', async (t) => {
  const { win, daemon } = await connected(t);
  win.console.log('plain', { a: 1 });
  win.console.info('info line');
  win.console.debug('debug line');
  win.console.warn('careful');
  win.console.error('fixture: deliberate error');
  const err = new Error('kaboom');
  win.dispatchEvent(new win.ErrorEvent('error', { message: 'kaboom', filename: 'http://127.0.0.1:5173/app.js', lineno: 12, colno: 3, error: err }));
  const rejection = new win.Event('unhandledrejection');
  rejection.reason = new Error('promise said no');
  win.dispatchEvent(rejection);
  await waitFor(() => eventsOf(daemon, 'error.uncaught').length === 2, { what: 'two uncaught errors' });
  await waitFor(() => eventsOf(daemon, 'console.error').length === 1);
  const logs = eventsOf(daemon, 'console.log').map((e) => [e.data.message, e.data.level]);
  assert.deepEqual(logs, [
    ['plain {"a":1}', undefined],
    ['info line', 'info'],
    ['debug line', 'debug'],
  ]);
  assert.equal(eventsOf(daemon, 'console.warn')[0].data.message, 'careful');
  assert.equal(eventsOf(daemon, 'console.error')[0].data.message, 'fixture: deliberate error');
  const [uncaught, rejected] = eventsOf(daemon, 'error.uncaught');
  assert.deepEqual([uncaught.data.message, uncaught.data.line, uncaught.data.source], ['kaboom', 12, 'http://127.0.0.1:5173/app.js']);
  assert.deepEqual([rejected.data.message, rejected.data.kind], ['promise said no', 'unhandledrejection']);
});

test('a lost and regained daemon: one warning each in the page console, none of them in console events', async (t) => {
  const clock = manualClock();
  const win = page();
  const lines = quietConsole(win);
  let daemon = await startDaemonStandIn();
  const port = daemon.port;
  const sdk = createReticle({ win, WebSocketImpl: WebSocket, clock, random: () => 0.5 });
  t.after(async () => {
    sdk.disconnect();
    await daemon.close();
  });
  sdk.connect({ port, present: false });
  await waitFor(() => sdk.status().connected);
  clock.advance(1000);
  await daemon.close();
  await waitFor(() => sdk.status().state === 'waiting');
  win.console.log('app log while offline');
  for (let i = 0; i < 4; i += 1) {
    clock.advance(sdk.status().transport.lastDelayMs);
    await waitFor(() => sdk.status().state === 'waiting' && sdk.status().transport.attempt === i + 2, { what: `retry ${i}` });
  }
  daemon = await startDaemonStandIn({ port });
  clock.advance(sdk.status().transport.lastDelayMs);
  await waitFor(() => sdk.status().connected);
  clock.advance(1000);
  win.console.log('app log after');
  await waitFor(() => daemon.events().some((e) => e.data.message === 'app log after'), { what: 'live log' });
  const sdkLines = lines.filter((l) => l.text.startsWith('[reticle]'));
  assert.equal(sdkLines.filter((l) => l.text.includes('lost the connection')).length, 1);
  assert.equal(sdkLines.filter((l) => l.text.includes('is back')).length, 1);
  assert.equal(sdkLines.length, 2, sdkLines.map((l) => l.text).join(' | '));
  const consoleEvents = daemon.events().filter((e) => e.type.startsWith('console.'));
  assert.deepEqual(consoleEvents.map((e) => e.data.message), ['app log while offline', 'app log after'], 'the offline log was queued and replayed; SDK warnings never reported');
});

test('network observer: fetch and XHR each give net.pending then net.request', async (t) => {
  const server = createServer((req, res) => {
    if (req.url === '/api/login') {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end('{"ok":false}');
    } else {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => server.close(resolve)));
  const origin = `http://127.0.0.1:${server.address().port}`;
  const win = page(`${origin}/`);
  win.fetch = (input, init) => fetch(new URL(String(input), origin), init); // jsdom has no fetch; Node's stands in
  const { daemon } = await connected(t, { win });
  const res = await win.fetch('/api/login', { method: 'POST', body: '{}' });
  assert.equal(res.status, 500);
  await new Promise((resolve) => {
    const xhr = new win.XMLHttpRequest();
    xhr.open('GET', '/api/health?token=secret');
    xhr.addEventListener('loadend', resolve);
    xhr.send();
  });
  await waitFor(() => eventsOf(daemon, 'net.request').length === 2, { what: 'two finished requests' });
  const pending = eventsOf(daemon, 'net.pending');
  const done = eventsOf(daemon, 'net.request');
  assert.deepEqual(pending.map((p) => [p.data.method, p.data.initiator]), [['POST', 'fetch'], ['GET', 'xhr']]);
  const [login, health] = done;
  assert.deepEqual([login.data.method, login.data.url, login.data.status, login.data.ok], ['POST', `${origin}/api/login`, 500, false]);
  assert.equal(typeof login.data.durationMs, 'number');
  assert.equal(login.data.id, pending[0].data.id);
  assert.deepEqual([health.data.status, health.data.ok, health.data.initiator], [200, true, 'xhr']);
  assert.equal(health.data.url, `${origin}/api/health?token=[REDACTED]`);
});

test('response bodies: captured only while net_bodies asks, bounded and redacted, for fetch and XHR', async (t) => {
  const big = 'x'.repeat(40 * 1024);
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url === '/api/big') res.end(`{"word":"serendipity","pad":"${big}"}`);
    else res.end('{"quote":"serendipity","token":"s3cret","user":{"password":"hunter2"}}');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => server.close(resolve)));
  const origin = `http://127.0.0.1:${server.address().port}`;
  const win = page(`${origin}/`);
  win.fetch = (input, init) => fetch(new URL(String(input), origin), init);
  const { daemon, conn } = await connected(t, { win });
  const xhrGet = (path) =>
    new Promise((resolve) => {
      const xhr = new win.XMLHttpRequest();
      xhr.open('GET', path);
      xhr.addEventListener('loadend', resolve);
      xhr.send();
    });

  await (await win.fetch('/api/quote')).text();
  await waitFor(() => eventsOf(daemon, 'net.request').length === 1, { what: 'the unasked request' });
  assert.equal('body' in eventsOf(daemon, 'net.request')[0].data, false, 'no body is read unless asked');

  const refused = await daemon.command(conn, 'net_bodies', {});
  assert.equal(refused.ok, false);
  const asked = await daemon.command(conn, 'net_bodies', { forMs: 10 * 60 * 1000 });
  assert.equal(asked.ok, true);
  assert.equal(asked.result.forMs, 2 * 60 * 1000, 'capture is bounded in time');

  const appRead = await (await win.fetch('/api/quote')).json();
  assert.equal(appRead.token, 's3cret', "the app's own response is untouched");
  await xhrGet('/api/quote');
  await win.fetch('/api/big').then((r) => r.text());
  await waitFor(() => eventsOf(daemon, 'net.request').length === 4, { what: 'three captured requests' });
  const [, fetched, viaXhr, cut] = eventsOf(daemon, 'net.request');
  for (const e of [fetched, viaXhr]) {
    assert.match(e.data.body, /"quote":"serendipity"/);
    assert.doesNotMatch(e.data.body, /s3cret|hunter2/, 'sensitive values are redacted');
    assert.match(e.data.body, /"token":"\[REDACTED\]"/);
    assert.equal(e.data.bodyTruncated, false);
  }
  assert.equal(cut.data.bodyTruncated, true);
  assert.equal(cut.data.body.length, 16 * 1024, 'a body is cut at the bound');
  assert.match(cut.data.body, /serendipity/);
});

test('route observer: pushState, replaceState, hash and popstate', async (t) => {
  const { win, daemon } = await connected(t);
  win.history.pushState({}, '', '/?view=list');
  win.history.replaceState({}, '', '/?view=list&sort=asc');
  win.location.hash = '#row-50';
  await waitFor(() => eventsOf(daemon, 'route.change').length >= 3, { what: 'hash change' });
  win.history.back();
  await waitFor(() => eventsOf(daemon, 'route.change').length >= 4, { what: 'popstate' });
  const routes = eventsOf(daemon, 'route.change').map((e) => e.data.trigger);
  assert.deepEqual(routes.slice(0, 2), ['pushState', 'replaceState']);
  // a fragment navigation fires popstate then hashchange: reported once, by whichever came first
  assert.ok(['popstate', 'hashchange'].includes(routes[2]));
  assert.equal(eventsOf(daemon, 'route.change')[2].data.hash, '#row-50');
  assert.ok(['popstate', 'hashchange'].includes(routes[3]));
  assert.equal(routes.length, 4, 'each URL change reported exactly once');
  const first = eventsOf(daemon, 'route.change')[0].data;
  assert.equal(first.from, 'http://127.0.0.1:5173/?reticlePort=1&reticleToken=[REDACTED]&session=t1');
  assert.equal(first.to, 'http://127.0.0.1:5173/?view=list');
  assert.equal(first.pathname, '/');
  assert.equal(first.search, '?view=list');
});

test('DOM observer: one summarised event per kind per window, with counts', async (t) => {
  const { win, daemon } = await connected(t);
  const list = win.document.createElement('ul');
  for (let i = 0; i < 30; i += 1) {
    const li = win.document.createElement('li');
    li.textContent = `Row ${i}`;
    list.append(li);
  }
  win.document.body.append(list); // one added root
  for (const li of Array.from(list.children).slice(0, 12)) li.setAttribute('data-state', 'on');
  win.document.querySelector('[data-testid=target]').remove();
  await waitFor(() => eventsOf(daemon, 'dom.added').length && eventsOf(daemon, 'dom.attr').length && eventsOf(daemon, 'dom.removed').length, { what: 'dom window' });
  const added = eventsOf(daemon, 'dom.added')[0];
  assert.equal(added.data.count, 1);
  assert.equal(added.data.role, 'list');
  assert.match(added.ref, /^e\d+$/);
  const attr = eventsOf(daemon, 'dom.attr')[0];
  assert.equal(attr.data.count, 12);
  assert.equal(attr.data.samples.length, 10);
  assert.equal(attr.data.attr, 'data-state');
  const removed = eventsOf(daemon, 'dom.removed')[0];
  assert.equal(removed.data.name, 'Target');
});

test('signals: delivered with redacted data; a signal before connect() arrives after hello', async (t) => {
  const daemon = await startDaemonStandIn();
  const win = page();
  quietConsole(win);
  const sdk = createReticle({ win, WebSocketImpl: WebSocket, random: () => 0.5 });
  t.after(async () => {
    sdk.disconnect();
    await daemon.close();
  });
  assert.equal(sdk.signal('app.booted', { at: 1 }).ok, true);
  assert.equal(sdk.signal('', {}).ok, false);
  sdk.connect({ port: daemon.port, present: false });
  sdk.signal('login.succeeded', { user: 'ann', token: 'secret' });
  await waitFor(() => eventsOf(daemon, 'signal').length === 2);
  const frames = daemon.connections[0].frames;
  assert.equal(frames[0].kind, 'hello');
  const [booted, login] = eventsOf(daemon, 'signal');
  assert.equal(booted.data.name, 'app.booted');
  assert.equal(booted.sessionId, frames[0].sessionId);
  assert.deepEqual(login.data, { name: 'login.succeeded', data: { user: 'ann', token: '[REDACTED]' } });
  assert.ok(login.seq > booted.seq, 'events carry a per-page sequence number');
});

test('disconnect restores what the SDK wrapped and closes the socket', async (t) => {
  const win = page();
  const beforeLog = win.console.log;
  const { sdk, daemon } = await connected(t, { win });
  void beforeLog;
  const wrappedLog = win.console.log;
  const wrappedPush = win.history.pushState;
  sdk.disconnect();
  assert.notEqual(win.console.log, wrappedLog);
  assert.notEqual(win.history.pushState, wrappedPush);
  await waitFor(() => daemon.connections[0].closed);
  assert.equal(sdk.status().state, 'idle');
});

test('a session id another page carries: refused "session in use", the page reconnects under an id of its own', async (t) => {
  const daemon = await startDaemonStandIn({
    onHello: (conn, hello) => {
      if (hello.sessionId === 'shared') conn.socket.close(1008, 'session in use: another open page carries it; connect with another id (shared)');
    },
  });
  const win = page('http://127.0.0.1:5173/');
  const lines = quietConsole(win);
  win.sessionStorage.setItem('__reticle_session', 'shared'); // a duplicated tab's copy, or the parent's
  const sdk = createReticle({ win, WebSocketImpl: WebSocket, clock: captureClock(globalThis), settle: { quietMs: 0, maxMs: 50 }, random: () => 0.5 });
  t.after(async () => {
    sdk.disconnect();
    await daemon.close();
  });
  assert.equal(sdk.connect({ port: daemon.port, present: false }).sessionId, 'shared');
  const second = await waitFor(() => daemon.connections[1]?.frames[0], { what: 'the second hello' });
  assert.equal(second.kind, 'hello');
  assert.notEqual(second.sessionId, 'shared');
  assert.equal(sdk.status().sessionId, second.sessionId);
  assert.equal(win.sessionStorage.getItem('__reticle_session'), 'shared', "the storage the other page may share keeps that page's id");
  const warned = lines.filter((l) => l.level === 'warn' && l.text.includes('session shared is in use') && l.text.includes(second.sessionId));
  assert.equal(warned.length, 1, JSON.stringify(lines));
});

test('into the back/forward cache the socket is let go (close 1000 "pagehide"); shown again, the same session reconnects', async (t) => {
  const { win, daemon, sdk, status } = await connected(t);
  const PageTransition = win.PageTransitionEvent || win.Event;
  const transition = (type, persisted) => {
    const ev = new PageTransition(type, { persisted });
    if (ev.persisted !== persisted) Object.defineProperty(ev, 'persisted', { value: persisted });
    win.dispatchEvent(ev);
  };
  // A pagehide that unloads the document for good is the browser's to close.
  transition('pagehide', false);
  assert.equal(sdk.status().state, 'open');
  const closed = new Promise((resolve) => daemon.connections[0].socket.once('close', (code, reason) => resolve({ code, reason: String(reason) })));
  transition('pagehide', true);
  assert.deepEqual(await closed, { code: 1000, reason: 'pagehide' });
  assert.equal(sdk.status().state, 'suspended');
  sdk.signal('while-cached');
  transition('pageshow', true);
  const hello = await waitFor(() => daemon.connections[1]?.frames[0], { what: 'the hello of the shown document' });
  assert.equal(hello.kind, 'hello');
  assert.equal(hello.sessionId, status.sessionId, 'the document takes its own session back');
  const signal = await waitFor(() => daemon.connections[1].frames.find((f) => f.kind === 'event' && f.event.type === 'signal'), { what: 'the queued signal' });
  assert.equal(signal.event.data.name, 'while-cached');
  assert.equal(daemon.connections.length, 2, 'no other attempt while the document was cached');
});

test('disconnect stops following the back/forward cache', async (t) => {
  const { win, daemon, sdk } = await connected(t);
  sdk.disconnect();
  await waitFor(() => daemon.connections[0].closed);
  const ev = new win.Event('pageshow');
  Object.defineProperty(ev, 'persisted', { value: true });
  win.dispatchEvent(ev);
  assert.equal(sdk.status().state, 'idle');
  assert.equal(daemon.connections.length, 1);
});
