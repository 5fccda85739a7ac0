import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runAct, runActSequence } from '../src/commands/act.js';
import { runQuery } from '../src/dom/query.js';
import { pageContext } from '../test-support/helpers.js';

const HTML = `
  <form data-testid="login-form">
    <label for="u">Username</label><input id="u" data-testid="user">
    <input type="password" aria-label="Password" data-testid="password">
    <textarea aria-label="Notes" data-testid="notes"></textarea>
    <select aria-label="Colour" data-testid="colour"><option value="r">Red</option><option value="g">Green</option></select>
    <input type="checkbox" aria-label="Agree" data-testid="agree">
    <input type="radio" name="k" aria-label="Kind A" data-testid="kind-a">
    <button type="submit" data-testid="submit">Sign in</button>
  </form>
  <button data-testid="counter">Count 0</button>
  <button data-testid="delete-item">Delete item</button>
  <button data-testid="dropdown">Dropdown</button>
  <button data-testid="off" disabled>Off</button>
  <div data-testid="box">plain</div>
  <div data-testid="slot"><button data-testid="target">Target</button></div>`;

async function setup() {
  const ctx = await pageContext(HTML);
  const ref = (testid) => runQuery(ctx, { testid }).result.elements[0].ref;
  const el = (testid) => ctx.doc.querySelector(`[data-testid="${testid}"]`);
  return { ctx, ref, el };
}

test('click dispatches the pointer/mouse sequence and reports the effect', async () => {
  const { ctx, ref, el } = await setup();
  const seen = [];
  for (const type of ['pointerdown', 'mousedown', 'pointerup', 'mouseup', 'click']) el('counter').addEventListener(type, () => seen.push(type));
  el('counter').addEventListener('click', () => {
    el('counter').textContent = 'Count 1';
  });
  const out = await runAct(ctx, { ref: ref('counter'), action: 'click' });
  assert.equal(out.ok, true, out.error);
  assert.deepEqual(seen, ['pointerdown', 'mousedown', 'pointerup', 'mouseup', 'click']);
  assert.equal(out.result.dispatched, true);
  assert.equal(out.result.settled, true);
  assert.equal(out.result.testid, 'counter');
  assert.ok(out.result.effect.domMutatedWithin >= 1);
  assert.match(out.result.effect.focusMoved, /^body->e\d+$/);
});

test('a stale ref after a re-render is refused by name and nothing is clicked', async () => {
  const { ctx, ref, el } = await setup();
  const oldRef = ref('target');
  let clicks = 0;
  const fresh = ctx.doc.createElement('button');
  fresh.dataset.testid = 'target';
  fresh.textContent = 'Target';
  fresh.addEventListener('click', () => (clicks += 1));
  el('slot').replaceChildren(fresh); // re-render: same testid, same text, new element
  const out = await runAct(ctx, { ref: oldRef, action: 'click' });
  assert.equal(out.ok, false);
  assert.match(out.error, new RegExp(`ref '${oldRef}' is stale`));
  assert.equal(clicks, 0, 'the new occupant was not clicked');
});

test('fill, type and clear set values through the native setter with input/change events', async () => {
  const { ctx, ref, el } = await setup();
  const events = [];
  el('user').addEventListener('input', () => events.push('input'));
  el('user').addEventListener('change', () => events.push('change'));
  let out = await runAct(ctx, { ref: ref('user'), action: 'fill', args: { value: 'ann' } });
  assert.equal(out.ok, true, out.error);
  assert.equal(el('user').value, 'ann');
  assert.equal(out.result.effect.valueChanged, true);
  assert.deepEqual(events, ['input', 'change']);
  out = await runAct(ctx, { ref: ref('user'), action: 'type', args: { text: 'ie' } });
  assert.equal(el('user').value, 'annie');
  out = await runAct(ctx, { ref: ref('user'), action: 'clear' });
  assert.equal(el('user').value, '');
  out = await runAct(ctx, { ref: ref('password'), action: 'fill', args: { value: 's3cret' } });
  assert.equal(out.result.effect.value, '[REDACTED]');
  assert.ok(!JSON.stringify(out).includes('s3cret'));
  out = await runAct(ctx, { ref: ref('notes'), action: 'fill', args: { value: 'hello' } });
  assert.equal(el('notes').value, 'hello');
  out = await runAct(ctx, { ref: ref('box'), action: 'fill', args: { value: 'x' } });
  assert.equal(out.ok, false);
  assert.match(out.error, /cannot fill a <div>/);
  out = await runAct(ctx, { ref: ref('user'), action: 'fill', args: {} });
  assert.match(out.error, /fill needs args.value/);
});

test('select by value or label; unknown option lists the options', async () => {
  const { ctx, ref, el } = await setup();
  assert.equal((await runAct(ctx, { ref: ref('colour'), action: 'select', args: { value: 'g' } })).ok, true);
  assert.equal(el('colour').value, 'g');
  assert.equal((await runAct(ctx, { ref: ref('colour'), action: 'select', args: { value: 'Red' } })).ok, true);
  assert.equal(el('colour').value, 'r');
  const bad = await runAct(ctx, { ref: ref('colour'), action: 'select', args: { value: 'Blue' } });
  assert.match(bad.error, /no option 'Blue'; options: r \(Red\), g \(Green\)/);
});

test('check and uncheck are idempotent; a radio cannot be unchecked', async () => {
  const { ctx, ref, el } = await setup();
  assert.equal((await runAct(ctx, { ref: ref('agree'), action: 'check' })).result.dispatched, true);
  assert.equal(el('agree').checked, true);
  const again = await runAct(ctx, { ref: ref('agree'), action: 'check' });
  assert.equal(again.result.dispatched, false);
  assert.match(again.result.warning, /already checked/);
  await runAct(ctx, { ref: ref('agree'), action: 'uncheck' });
  assert.equal(el('agree').checked, false);
  assert.match((await runAct(ctx, { ref: ref('kind-a'), action: 'uncheck' })).error, /radio/);
});

test('destructive actions need confirmDangerous: submit, and clicks on delete-ish elements', async () => {
  const { ctx, ref, el } = await setup();
  let submits = 0;
  el('login-form').addEventListener('submit', (e) => {
    e.preventDefault();
    submits += 1;
  });
  let deletes = 0;
  el('delete-item').addEventListener('click', () => (deletes += 1));
  const blocked = await runAct(ctx, { ref: ref('user'), action: 'submit' });
  assert.equal(blocked.ok, false);
  assert.match(blocked.error, /destructive action blocked.*confirmDangerous=true/);
  assert.equal(submits, 0);
  assert.equal((await runAct(ctx, { ref: ref('user'), action: 'submit', args: { confirmDangerous: true } })).ok, true);
  assert.equal(submits, 1);
  assert.match((await runAct(ctx, { ref: ref('delete-item'), action: 'click' })).error, /destructive/);
  assert.equal(deletes, 0);
  assert.equal((await runAct(ctx, { ref: ref('delete-item'), action: 'click', args: { confirmDangerous: true } })).ok, true);
  assert.equal(deletes, 1);
  assert.equal((await runAct(ctx, { ref: ref('dropdown'), action: 'click' })).ok, true, "'dropdown' is not 'drop'");
  // clicking an ordinary submit button is a click, not a destructive submit
  assert.equal((await runAct(ctx, { ref: ref('submit'), action: 'click' })).ok, true);
  assert.equal(submits, 2);
});

test('press Enter in a field submits through the default button; Tab moves focus', async () => {
  const { ctx, ref, el } = await setup();
  let submits = 0;
  el('login-form').addEventListener('submit', (e) => {
    e.preventDefault();
    submits += 1;
  });
  assert.equal((await runAct(ctx, { ref: ref('user'), action: 'press', args: { key: 'Enter' } })).ok, true);
  assert.equal(submits, 1);
  el('user').focus();
  await runAct(ctx, { ref: ref('user'), action: 'press', args: { key: 'Tab' } });
  assert.equal(ctx.doc.activeElement, el('password'));
  assert.match((await runAct(ctx, { ref: ref('user'), action: 'press', args: {} })).error, /press needs args.key/);
  assert.match((await runAct(ctx, { ref: ref('user'), action: 'press', args: { key: 'Hyper+a' } })).error, /unknown key modifier/);
});

test('hover, dblclick, focus, blur, scrollIntoView', async () => {
  const { ctx, ref, el } = await setup();
  const seen = [];
  for (const type of ['mouseenter', 'mouseover', 'dblclick', 'focus', 'blur']) el('counter').addEventListener(type, () => seen.push(type));
  await runAct(ctx, { ref: ref('counter'), action: 'hover' });
  await runAct(ctx, { ref: ref('counter'), action: 'dblclick' });
  await runAct(ctx, { ref: ref('counter'), action: 'blur' });
  await runAct(ctx, { ref: ref('counter'), action: 'focus' });
  assert.ok(['mouseover', 'mouseenter', 'dblclick', 'focus', 'blur'].every((t) => seen.includes(t)), seen.join(','));
  const scrolled = await runAct(ctx, { ref: ref('counter'), action: 'scrollIntoView' });
  assert.equal(scrolled.ok, true);
});

test('disabled controls, unknown actions and bad args are refusals', async () => {
  const { ctx, ref } = await setup();
  assert.match((await runAct(ctx, { ref: ref('off'), action: 'click' })).error, /is disabled; nothing was dispatched/);
  assert.match((await runAct(ctx, { ref: ref('counter'), action: 'teleport' })).error, /unknown action 'teleport'/);
  assert.match((await runAct(ctx, { ref: ref('counter'), action: 'click', args: [] })).error, /args must be an object/);
  assert.match((await runAct(ctx, null)).error, /act needs an object/);
});

test('a page handler that throws becomes ok:false, not an exception', async () => {
  const { ctx, ref, el } = await setup();
  el('counter').addEventListener('click', () => {
    throw new Error('handler bug');
  });
  // as in a browser, a listener's exception is reported on the window and dispatch goes on
  const out = await runAct(ctx, { ref: ref('counter'), action: 'click' });
  assert.equal(out.ok, true);
  assert.equal(out.result.dispatched, true);
  assert.match(String(ctx.win.jsdomErrors[0]?.detail?.message ?? ctx.win.jsdomErrors[0]), /handler bug/);
});

test('act_sequence runs steps in order and stops at the first failure, naming it', async () => {
  const { ctx, ref, el } = await setup();
  const ok = await runActSequence(ctx, {
    steps: [
      { ref: ref('user'), action: 'fill', args: { value: 'ann' } },
      { ref: ref('agree'), action: 'check' },
    ],
  });
  assert.equal(ok.ok, true);
  assert.equal(ok.result.count, 2);
  assert.equal(ok.result.steps[1].action, 'check');
  const failed = await runActSequence(ctx, {
    steps: [
      { ref: ref('user'), action: 'fill', args: { value: 'bob' } },
      { ref: 'e9999', action: 'click' },
      { ref: ref('user'), action: 'fill', args: { value: 'never' } },
    ],
  });
  assert.equal(failed.ok, false);
  assert.match(failed.error, /step 2 of 3 \(click e9999\) failed after 1 completed/);
  assert.equal(el('user').value, 'bob', 'step 3 never ran');
  assert.match((await runActSequence(ctx, { steps: [] })).error, /non-empty array/);
});

test("settle 'task' answers after one task on a page that never goes quiet; quiet is the default", async () => {
  const { ctx, ref, el } = await setup();
  ctx.settle = { quietMs: 40, maxMs: 300 };
  let ticks = 0;
  const busy = setInterval(() => {
    ticks += 1;
    el('box').textContent = `tick ${ticks}`;
  }, 5);
  try {
    const tasked = await runAct(ctx, { ref: ref('counter'), action: 'click', settle: 'task' });
    assert.equal(tasked.ok, true, tasked.error);
    assert.equal(tasked.result.settled, true);
    assert.equal(tasked.result.settleReason, null);
    // Control: the default waits for a quiet spell the busy page never gives, up to its bound.
    const quiet = await runAct(ctx, { ref: ref('counter'), action: 'click' });
    assert.equal(quiet.ok, true, quiet.error);
    assert.equal(quiet.result.settled, false);
    assert.equal(quiet.result.settleReason, 'timeout');
  } finally {
    clearInterval(busy);
  }
  const bad = await runAct(ctx, { ref: ref('counter'), action: 'click', settle: 'later' });
  assert.equal(bad.ok, false);
  assert.match(bad.error, /unknown settle 'later' \(known: quiet, task\)/);
});

test("settle 'task' runs after the action's microtasks, on a posted message, within its bound", async () => {
  const { waitForTask } = await import('../src/dom/settle.js');
  const { captureClock } = await import('../src/natives.js');
  const clock = captureClock(globalThis);
  const order = [];
  const tasked = waitForTask({ win: globalThis, clock, maxMs: 1000 }).then((r) => {
    order.push('settled');
    return r;
  });
  Promise.resolve().then(() => order.push('microtask'));
  assert.deepEqual(await tasked, { settled: true, settleReason: null });
  assert.deepEqual(order, ['microtask', 'settled']);
  // A page whose posted messages never arrive answers at the bound, unsettled.
  class Silent {
    constructor() {
      this.port1 = { close() {} };
      this.port2 = { postMessage() {} };
    }
  }
  const stuck = await waitForTask({ win: { MessageChannel: Silent }, clock, maxMs: 20 });
  assert.deepEqual(stuck, { settled: false, settleReason: 'timeout' });
});
