import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createOutbox } from '../src/outbox.js';

let seq = 0;
const ev = (type, t) => ({ type, t, seq: seq++, text: `${type}@${t}` });

test('keeps everything in FIFO order while below the limit', () => {
  const box = createOutbox({ limit: 5 });
  const items = [ev('signal', 1), ev('page.health', 2), ev('net.request', 3)];
  items.forEach((i) => assert.equal(box.push(i), true));
  assert.deepEqual(box.drain().map((i) => i.text), items.map((i) => i.text));
  assert.equal(box.size, 0);
  assert.equal(box.takeGap(), null);
});

test('overflow evicts the oldest churn event first and preserves the order of the rest', () => {
  const box = createOutbox({ limit: 4 });
  box.push(ev('signal', 1));
  box.push(ev('page.health', 2)); // churn
  box.push(ev('console.error', 3));
  box.push(ev('dom.text', 4)); // churn
  box.push(ev('net.request', 5)); // evicts page.health@2
  box.push(ev('route.change', 6)); // evicts dom.text@4
  assert.deepEqual(box.drain().map((i) => i.text), ['signal@1', 'console.error@3', 'net.request@5', 'route.change@6']);
  const gap = box.takeGap();
  assert.equal(gap.dropped, 2);
  assert.equal(gap.firstDropT, 2);
});

test('with no churn left, the oldest event goes; the gap is stamped at the earliest lost event', () => {
  const box = createOutbox({ limit: 3 });
  box.push(ev('signal', 10));
  box.push(ev('page.health', 20));
  box.push(ev('signal', 30));
  box.push(ev('signal', 40)); // evicts page.health@20 (churn first)
  box.push(ev('signal', 50)); // no churn: evicts signal@10, the oldest
  const gap = box.takeGap();
  assert.equal(gap.dropped, 2);
  assert.equal(gap.firstDropT, 10, 'the hole starts at the earliest lost event, not the first eviction');
  assert.deepEqual(box.drain().map((i) => i.text), ['signal@30', 'signal@40', 'signal@50']);
});

test('a churn event arriving at a full queue without churn is itself the one dropped', () => {
  const box = createOutbox({ limit: 2 });
  box.push(ev('signal', 1));
  box.push(ev('signal', 2));
  assert.equal(box.push(ev('page.health', 3)), false);
  assert.deepEqual(box.drain().map((i) => i.text), ['signal@1', 'signal@2']);
  assert.equal(box.takeGap().dropped, 1);
});

test('600 events into a 500 queue: 100 dropped, 500 kept in order, gap counts them', () => {
  const box = createOutbox({ limit: 500 });
  const all = [];
  for (let i = 0; i < 600; i += 1) {
    const e = ev(i % 10 === 0 ? 'page.health' : 'signal', i);
    all.push(e);
    box.push(e);
  }
  const kept = box.drain();
  assert.equal(kept.length, 500);
  const gap = box.takeGap();
  assert.equal(gap.dropped, 100);
  // the 60 churn events went first, then the oldest 40 signals
  assert.equal(kept.filter((k) => k.type === 'page.health').length, 0);
  const ts = kept.map((k) => k.t);
  assert.deepEqual(ts, [...ts].sort((a, b) => a - b), 'order preserved');
  assert.equal(gap.firstDropT, 0);
  assert.equal(box.takeGap(), null, 'takeGap forgets');
});

test('restore puts unconfirmed entries back in front and merges their gap', () => {
  const box = createOutbox({ limit: 10 });
  box.push(ev('signal', 5));
  const sent = [ev('signal', 1), ev('signal', 2)];
  box.restore(sent, { dropped: 3, firstDropT: 0, firstDropSeq: 0, lastDropSeq: 2 });
  assert.deepEqual(box.drain().map((i) => i.t), [1, 2, 5]);
  assert.equal(box.takeGap().dropped, 3);
});
