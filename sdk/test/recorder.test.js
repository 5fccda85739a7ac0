import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRecorder } from '../src/recorder.js';
import { runRecord } from '../src/commands/record.js';
import { candidateTargets, locatorFor } from '../src/dom/locator.js';
import { EventType } from '../src/protocol.js';
import { pageContext } from '../test-support/helpers.js';

const HTML = `
  <form data-testid="login-form" aria-label="Login">
    <label for="u">Username</label><input id="u" data-testid="login-user" placeholder="ann">
    <label for="p">Password</label><input id="p" type="password" data-testid="login-password">
    <button type="submit" data-testid="login-submit"><span>Sign in</span></button>
  </form>
  <label><input type="checkbox" data-testid="subscribe"> Subscribe</label>
  <button data-testid="a">Same</button><button data-testid="b">Same</button>
  <div data-testid="plain"><span>plain words</span></div>`;

/** A page with a recorder whose events a test dispatches stand in for a person's. */
async function setup({ isPerson = () => true } = {}) {
  const ctx = await pageContext(HTML);
  const emitted = [];
  const recorder = createRecorder({ win: ctx.win, context: () => ctx, emit: (type, data) => emitted.push({ type, data }), isPerson });
  ctx.recorder = recorder;
  ctx.doc.querySelector('form').addEventListener('submit', (e) => e.preventDefault());
  const el = (testid) => ctx.doc.querySelector(`[data-testid="${testid}"]`);
  const type = (testid, value) => {
    el(testid).value = value;
    el(testid).dispatchEvent(new ctx.win.Event('input', { bubbles: true }));
  };
  const click = (node) => node.dispatchEvent(new ctx.win.MouseEvent('click', { bubbles: true }));
  return { ctx, recorder, emitted, el, type, click };
}

test('a locator is the first user-facing name that singles the element out', async () => {
  const { ctx, el } = await setup();
  assert.deepEqual(locatorFor(ctx, el('login-user')), { role: 'textbox', name: 'Username' });
  assert.deepEqual(locatorFor(ctx, el('login-submit')), { role: 'button', name: 'Sign in' });
  // Two buttons share a name: only the testid singles each out.
  assert.deepEqual(locatorFor(ctx, el('a')), { testid: 'a' });
  assert.deepEqual(candidateTargets(el('plain')), [{ testid: 'plain' }, { text: 'plain words' }]);
  const nameless = ctx.doc.createElement('div');
  ctx.doc.body.append(nameless);
  assert.equal(locatorFor(ctx, nameless), null);
});

test('a sign-in becomes fill, fill (sensitive, no value) and click with the signal that followed', async () => {
  const { ctx, emitted, el, type, click } = await setup();
  assert.equal(runRecord(ctx, { action: 'start', id: 'r7' }).ok, true);
  click(el('login-user')); // focusing a text field is not a step
  type('login-user', 'a');
  type('login-user', 'ann');
  type('login-password', 'hunter2');
  click(el('login-submit').querySelector('span'));
  ctx.recorder.noteEvent(EventType.SIGNAL, { name: 'login.submitted' });
  ctx.recorder.noteEvent(EventType.SIGNAL, { name: 'login.succeeded' });
  click(el('subscribe')); // the browser toggles it and fires `change`
  const out = runRecord(ctx, { action: 'stop' });
  assert.equal(out.ok, true, out.error);
  assert.equal(out.result.stepCount, 4);
  assert.equal(emitted.length, 1);
  const [{ type: kind, data }] = emitted;
  assert.equal(kind, 'flow.recorded');
  assert.equal(data.id, 'r7');
  assert.deepEqual(data.flow.steps, [
    { action: 'fill', target: { role: 'textbox', name: 'Username' }, args: { value: 'ann' } },
    { action: 'fill', target: { role: 'textbox', name: 'Password' }, sensitive: true },
    { action: 'click', target: { role: 'button', name: 'Sign in' }, until: { kind: 'signal', name: 'login.succeeded' } },
    { action: 'check', target: { role: 'checkbox', name: 'Subscribe' } },
  ]);
  assert.ok(!JSON.stringify(data).includes('hunter2'), 'the password never leaves the page');
  assert.equal(runRecord(ctx, { action: 'stop' }).ok, false, 'nothing is recording now');
});

test('events a script dispatches are not a person and are never recorded', async () => {
  const { ctx, emitted, el, type, click } = await setup({ isPerson: (e) => e.isTrusted === true });
  runRecord(ctx, { action: 'start', id: 'r1' });
  type('login-user', 'ann');
  click(el('login-submit'));
  runRecord(ctx, { action: 'stop' });
  assert.deepEqual(emitted[0].data.flow.steps, []);
});

test('record refuses bad arguments, and a second start restarts', async () => {
  const { ctx, emitted, el, click } = await setup();
  assert.equal(runRecord(ctx, { action: 'jump' }).ok, false);
  assert.equal(runRecord(ctx, { action: 'start', id: 3 }).ok, false);
  assert.equal(runRecord(ctx, { action: 'start', id: 'r1' }).result.restarted, false);
  click(el('login-submit'));
  assert.equal(runRecord(ctx, { action: 'start', id: 'r2' }).result.restarted, true);
  click(el('login-submit'));
  runRecord(ctx, { action: 'stop' });
  assert.equal(emitted.length, 1);
  assert.equal(emitted[0].data.id, 'r2');
  assert.equal(emitted[0].data.flow.steps.length, 1, 'the first recording was discarded, each click listened to once');
  assert.equal(runRecord({}, { action: 'start' }).ok, false);
});
