import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBackoff } from '../src/backoff.js';
import { Transport } from '../src/protocol.js';

test('delays grow exponentially from the base and stay within [ceiling/2, ceiling]', () => {
  for (const r of [0, 0.37, 0.999999, 1]) {
    const b = createBackoff({ baseMs: 250, capMs: 30000, random: () => r });
    for (let n = 0; n < 12; n += 1) {
      const ceiling = Math.min(30000, 250 * 2 ** n);
      const d = b.next();
      assert.ok(d >= ceiling / 2 && d <= ceiling, `attempt ${n}: ${d} not in [${ceiling / 2}, ${ceiling}] (r=${r})`);
    }
  }
});

test('jitter spreads the delays: different random draws give different delays', () => {
  const draws = [0.1, 0.9];
  const delays = draws.map((r) => createBackoff({ random: () => r }).next());
  assert.notEqual(delays[0], delays[1]);
});

test('the cap holds forever: attempt count is unbounded and never exceeds capMs', () => {
  const b = createBackoff({ baseMs: 250, capMs: 30000, random: () => 1 });
  let last = 0;
  for (let n = 0; n < 2000; n += 1) last = b.next();
  assert.equal(last, 30000);
  assert.equal(b.attempt, 2000);
});

test('toCap jumps straight to cap-sized delays; reset goes back to the base', () => {
  const b = createBackoff({ baseMs: 250, capMs: 30000, random: () => 0.5 });
  b.toCap();
  const capped = b.next();
  assert.ok(capped >= 15000 && capped <= 30000, `capped delay ${capped}`);
  b.reset();
  const first = b.next();
  assert.ok(first >= 125 && first <= 250, `reset delay ${first}`);
});

test('garbage from random() still yields a delay in bounds', () => {
  for (const r of [NaN, -3, 7, Infinity]) {
    const d = createBackoff({ random: () => r }).next();
    assert.ok(d >= Transport.BACKOFF_BASE_MS / 2 && d <= Transport.BACKOFF_BASE_MS, `${r} → ${d}`);
  }
});

test('defaults are 250 ms base and 30 s cap', () => {
  const b = createBackoff();
  assert.equal(b.baseMs, 250);
  assert.equal(b.capMs, 30000);
});
