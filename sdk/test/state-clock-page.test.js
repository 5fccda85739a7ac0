import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readState, parsePath } from '../src/commands/state.js';
import { runClock } from '../src/commands/clock.js';
import { runNavigate, runRefresh, runScroll, runCapabilities } from '../src/commands/page.js';
import { runQuery } from '../src/dom/query.js';
import { pageContext } from '../test-support/helpers.js';

async function withStore() {
  const ctx = await pageContext('<div data-testid="a"></div>');
  const state = { user: { name: 'ann', token: 'secret', roles: ['admin', 'dev'] }, items: [{ id: 1 }, { id: 2 }], deep: { a: { b: { c: { d: 1 } } } } };
  ctx.stores.register('app', () => state);
  ctx.stores.register('broken', () => {
    throw new Error('store exploded');
  });
  return { ctx, state };
}

test('parsePath handles dots, brackets and arrays', () => {
  assert.deepEqual(parsePath('a.b[0].c').segments, ['a', 'b', '0', 'c']);
  assert.deepEqual(parsePath("a['x.y']").segments, ['a', 'x.y']);
  assert.deepEqual(parsePath(['a', 1]).segments, ['a', '1']);
  assert.deepEqual(parsePath('').segments, []);
});

test('state_read: a path that exists, redaction, and depth', async () => {
  const { ctx } = await withStore();
  let r = readState(ctx, { store: 'app', path: 'user.name' });
  assert.deepEqual(r.result, { store: 'app', path: 'user.name', found: true, value: 'ann', storeNames: ['app', 'broken'] });
  r = readState(ctx, { store: 'app', path: 'items[1].id' });
  assert.equal(r.result.value, 2);
  assert.equal(readState(ctx, { store: 'app', path: 'user.token' }).result.value, '[REDACTED]');
  assert.equal(readState(ctx, { store: 'app', path: 'user' }).result.value.token, '[REDACTED]');
  r = readState(ctx, { store: 'app', path: 'deep', depth: 1 });
  assert.equal(r.result.value.a.b, '[TRUNCATED]');
});

test('state_read: a wrong path answers found:false with the keys that exist', async () => {
  const { ctx } = await withStore();
  const r = readState(ctx, { store: 'app', path: 'user.email' });
  assert.equal(r.ok, true);
  assert.equal(r.result.found, false);
  assert.equal(r.result.resolvedPath, 'user');
  assert.equal(r.result.missing, 'email');
  assert.deepEqual(r.result.availableKeys, ['name', 'token', 'roles']);
  const top = readState(ctx, { store: 'app', path: 'nope' });
  assert.deepEqual(top.result.availableKeys, ['user', 'items', 'deep']);
  const intoPrimitive = readState(ctx, { store: 'app', path: 'user.name.first' });
  assert.match(intoPrimitive.result.reason, /it is string/);
});

test('state_read: unknown store, throwing store, all stores, bad args', async () => {
  const { ctx } = await withStore();
  const unknown = readState(ctx, { store: 'cart' });
  assert.equal(unknown.result.found, false);
  assert.deepEqual(unknown.result.availableKeys, ['app', 'broken']);
  const broken = readState(ctx, { store: 'broken' });
  assert.equal(broken.ok, true);
  assert.match(broken.result.reason, /getState\(\) threw: store exploded/);
  const all = readState(ctx, {});
  assert.equal(all.result.stores.app.user.name, 'ann');
  assert.match(all.result.stores.broken.error, /store exploded/);
  assert.equal(readState(ctx, { store: 5 }).ok, false);
  assert.equal(readState(ctx, { store: 'app', depth: -1 }).ok, false);
  assert.equal(readState(ctx, { path: 'a' }).ok, false);
});

test('registerStore refuses bad names and non-functions', async () => {
  const { ctx } = await withStore();
  assert.equal(ctx.stores.register('', () => 1).ok, false);
  assert.equal(ctx.stores.register('x', 'nope').ok, false);
  const reg = ctx.stores.register('temp', () => 1);
  reg.unregister();
  assert.ok(!ctx.stores.names().includes('temp'));
});

test('clock: freeze pins Date, advance fires due page timers in order, reset hands the rest back', async () => {
  const { ctx } = await withStore();
  const { win } = ctx;
  const fired = [];
  const frozen = runClock(ctx, { freeze: true });
  assert.equal(frozen.result.frozen, true);
  const t0 = win.Date.now();
  win.setTimeout(() => fired.push('b@200'), 200);
  win.setTimeout(() => fired.push('a@100'), 100);
  const cancelled = win.setTimeout(() => fired.push('never'), 50);
  win.clearTimeout(cancelled);
  const iv = win.setInterval(() => fired.push('tick'), 80);
  assert.equal(new win.Date().getTime(), t0, 'time does not move while frozen');
  const adv = runClock(ctx, { advanceMs: 170 });
  assert.deepEqual(fired, ['tick', 'a@100', 'tick']);
  assert.equal(adv.result.fired, 3);
  assert.equal(win.Date.now(), t0 + 170);
  win.clearInterval(iv);
  runClock(ctx, { advanceMs: 100 });
  assert.deepEqual(fired, ['tick', 'a@100', 'tick', 'b@200']);
  win.setTimeout(() => fired.push('after-reset'), 0);
  const reset = runClock(ctx, { reset: true });
  assert.equal(reset.result.frozen, false);
  assert.equal(reset.result.handedBack, 1);
  const { waitFor } = await import('../test-support/helpers.js');
  await waitFor(() => fired.includes('after-reset'), { what: 'a timer handed back to the real clock' });
  assert.equal(runClock(ctx, {}).ok, false);
  assert.equal(runClock(ctx, { advanceMs: -5 }).ok, false);
});

test('navigate: validated, answered first, then performed', async () => {
  const { ctx } = await withStore();
  const ok = runNavigate(ctx, { url: '/list?view=1' });
  assert.equal(ok.ok, true);
  assert.equal(ok.result.url, 'http://127.0.0.1:5173/list?view=1');
  assert.equal(typeof ok.after, 'function');
  assert.match(runNavigate(ctx, {}).error, /needs args.url/);
  assert.match(runNavigate(ctx, { url: 'javascript:alert(1)' }).error, /only http\(s\)/);
  assert.match(runNavigate(ctx, { url: 'x'.repeat(5000) }).error, /longer than 4096/);
  const hard = runRefresh(ctx, { hard: true });
  assert.equal(hard.result.hard, true);
});

test('scroll a container by dy and by fraction; bad args refused', async () => {
  const ctx = await pageContext('<div data-testid="list" style="height:100px;overflow:auto"></div>');
  const el = ctx.doc.querySelector('[data-testid=list]');
  // jsdom has no layout: give the container measurable sizes
  Object.defineProperty(el, 'scrollHeight', { value: 1000 });
  Object.defineProperty(el, 'clientHeight', { value: 100 });
  const ref = runQuery(ctx, { testid: 'list' }).result.elements[0].ref;
  let r = runScroll(ctx, { ref, dy: 250 });
  assert.deepEqual(r.result, { scrolled: true, scrollTop: 250, scrollHeight: 1000, clientHeight: 100, atEnd: false });
  r = runScroll(ctx, { ref, fraction: 1 });
  assert.equal(r.result.scrollTop, 900);
  assert.equal(r.result.atEnd, true);
  assert.equal(runScroll(ctx, { ref, fraction: 2 }).ok, false);
  assert.equal(runScroll(ctx, { ref, dy: 'lots' }).ok, false);
  assert.match(runScroll(ctx, { ref: 'e9999' }).error, /never issued/);
});

test('capabilities lists testids, signals, stores, flows and the SDK', async () => {
  const { ctx } = await withStore();
  ctx.signals.add('login.succeeded');
  ctx.flows.push({ name: 'login' });
  const r = runCapabilities(ctx).result;
  assert.deepEqual(r.testids, ['a']);
  assert.deepEqual(r.signals, ['login.succeeded']);
  assert.deepEqual(r.stores, ['app', 'broken']);
  assert.deepEqual(r.flows, [{ name: 'login', steps: [] }]);
  assert.equal(r.sdk.protocolVersion, 1);
});
