// Transport against a real WebSocket server on a free loopback port; time is a manual clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTransport } from '../src/transport.js';
import { createOutbox } from '../src/outbox.js';
import { createBackoff } from '../src/backoff.js';
import { createSdkLog } from '../src/log.js';
import { manualClock, waitFor, startDaemonStandIn, freePort, recordingConsole, WebSocket } from '../test-support/helpers.js';

function harness(url, { random = () => 0.5, queueLimit = 500, onSessionInUse } = {}) {
  const clock = manualClock();
  const { sink, lines } = recordingConsole();
  const outbox = createOutbox({ limit: queueLimit });
  let seq = 0;
  const frames = [];
  const transport = createTransport({
    url,
    WebSocketImpl: WebSocket,
    clock,
    log: createSdkLog(sink),
    outbox,
    random,
    backoff: createBackoff({ random }),
    buildHello: () => ({ kind: 'hello', protocolVersion: 1, sessionId: 's-test', url: 'http://x/', title: 'T', adapters: [], hasCapabilities: false }),
    encodeGapMarker: (gap) => JSON.stringify({ kind: 'event', event: { t: gap.firstDropT, type: 'transport.overflow', sessionId: 's-test', data: { dropped: gap.dropped, firstDropT: gap.firstDropT } } }),
    onFrame: (data) => frames.push(String(data)),
    onSessionInUse,
  });
  const event = (type, t = clock.now()) => {
    const s = seq++;
    return { type, t, seq: s, text: JSON.stringify({ kind: 'event', event: { t, type, sessionId: 's-test', data: { n: s } } }) };
  };
  const warnings = () => lines.filter((l) => l.level === 'warn').map((l) => l.text);
  return { clock, transport, outbox, event, frames, warnings };
}

test('hello is the first frame, then queued events in order, then live ones', async (t) => {
  const daemon = await startDaemonStandIn();
  t.after(() => daemon.close());
  const h = harness(daemon.url);
  t.after(() => h.transport.stop());
  h.transport.sendEvent(h.event('signal')); // before start: queued
  h.transport.sendEvent(h.event('console.log'));
  h.transport.start();
  await waitFor(() => daemon.frames().length >= 3, { what: 'hello + backlog' });
  h.transport.sendEvent(h.event('net.request'));
  await waitFor(() => daemon.frames().length >= 4, { what: 'live event' });
  const kinds = daemon.frames().map((f) => (f.kind === 'event' ? f.event.type : f.kind));
  assert.deepEqual(kinds, ['hello', 'signal', 'console.log', 'net.request']);
});

test('daemon down: attempts back off with growing, jittered, capped delays and never stop', async (t) => {
  const port = await freePort();
  const h = harness(`ws://127.0.0.1:${port}/reticle`, { random: () => 1 });
  t.after(() => h.transport.stop());
  h.transport.start();
  const delays = [];
  for (let i = 0; i < 10; i += 1) {
    await waitFor(() => h.transport.state === 'waiting', { what: `attempt ${i} to fail` });
    const d = h.transport.stats.lastDelayMs;
    delays.push(d);
    h.clock.advance(d);
  }
  assert.deepEqual(delays, [250, 500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
  const unreachable = h.warnings().filter((w) => w.includes('cannot reach'));
  assert.equal(unreachable.length, 1, 'one "cannot reach" warning, however many attempts');
  assert.ok(h.warnings().every((w) => w.startsWith('[reticle] ')), 'SDK warnings are tagged');
});

/** A daemon stand-in closing every hello 1008 with `reason` until `accept()`. */
async function refusingDaemon(t, reason) {
  let refuse = true;
  const daemon = await startDaemonStandIn({
    onHello: (conn) => {
      if (refuse) conn.socket.close(1008, reason);
    },
  });
  t.after(() => daemon.close());
  return { daemon, accept: () => (refuse = false) };
}

test('a 1008 refusal is not terminal: one warning, retries at the cap, reconnects when the daemon accepts', async (t) => {
  const { daemon, accept } = await refusingDaemon(t, 'protocol version mismatch: daemon speaks 2, page speaks 1');
  const h = harness(daemon.url, { random: () => 0 });
  t.after(() => h.transport.stop());
  h.transport.start();
  for (let i = 0; i < 3; i += 1) {
    await waitFor(() => h.transport.state === 'waiting' && h.transport.stats.refusals === i + 1, { what: `refusal ${i + 1}` });
    const d = h.transport.stats.lastDelayMs;
    assert.ok(d >= 15000 && d <= 30000, `delay after a refusal sits at the cap (got ${d})`);
    if (i < 2) h.clock.advance(d);
  }
  const refusals = h.warnings().filter((w) => w.includes('refused'));
  assert.equal(refusals.length, 1, 'warned once for the whole refusal episode');
  assert.match(refusals[0], /version mismatch/);
  assert.ok(!h.warnings().some((w) => w.includes('lost the connection')), 'a never-established socket is not a "lost" connection');
  accept();
  h.clock.advance(h.transport.stats.lastDelayMs);
  await waitFor(() => h.transport.state === 'open', { what: 'accepted' });
  h.clock.advance(1000);
  assert.equal(h.transport.established, true);
});

test('a "session in use" refusal hands the conflict to the caller and retries soon, not at the cap', async (t) => {
  const { daemon, accept } = await refusingDaemon(t, 'session in use: another open page carries it; connect with another id (s-test)');
  let taken = 0;
  const h = harness(daemon.url, { random: () => 0, onSessionInUse: () => ((taken += 1), true) });
  t.after(() => h.transport.stop());
  h.transport.start();
  await waitFor(() => h.transport.state === 'waiting' && h.transport.stats.sessionConflicts === 1, { what: 'the conflict' });
  assert.equal(taken, 1, 'the caller was asked to take a new session id');
  assert.equal(h.transport.stats.refusals, 0, 'a conflict is not a refusal');
  assert.ok(h.transport.stats.lastDelayMs < 1000, `retried soon (got ${h.transport.stats.lastDelayMs} ms)`);
  assert.ok(!h.warnings().some((w) => w.includes('refused this page')), 'no refusal warning for a conflict the SDK resolved');
  accept();
  h.clock.advance(h.transport.stats.lastDelayMs);
  await waitFor(() => h.transport.state === 'open', { what: 'accepted under the new id' });
});

test('a "session in use" refusal nobody resolves is an ordinary refusal, retried at the cap', async (t) => {
  const { daemon } = await refusingDaemon(t, 'session in use: another open page carries it');
  const h = harness(daemon.url, { random: () => 0 });
  t.after(() => h.transport.stop());
  h.transport.start();
  await waitFor(() => h.transport.state === 'waiting' && h.transport.stats.refusals === 1, { what: 'the refusal' });
  assert.ok(h.transport.stats.lastDelayMs >= 15000, `at the cap (got ${h.transport.stats.lastDelayMs} ms)`);
});

test('an established connection lost and regained: exactly one "lost" and one "back" warning', async (t) => {
  let daemon = await startDaemonStandIn();
  const port = daemon.port;
  const h = harness(daemon.url);
  t.after(async () => {
    h.transport.stop();
    await daemon.close();
  });
  h.transport.start();
  await waitFor(() => h.transport.state === 'open');
  h.clock.advance(1000); // stays open: established
  assert.equal(h.transport.established, true);
  await daemon.close(); // daemon stops
  await waitFor(() => h.transport.state === 'waiting', { what: 'close noticed' });
  for (let i = 0; i < 5; i += 1) {
    h.clock.advance(h.transport.stats.lastDelayMs);
    await waitFor(() => h.transport.state === 'waiting' && h.transport.stats.attempt === i + 2, { what: `retry ${i}` });
  }
  daemon = await startDaemonStandIn({ port });
  h.clock.advance(h.transport.stats.lastDelayMs);
  await waitFor(() => h.transport.state === 'open', { what: 'reconnected' });
  h.clock.advance(1000);
  const lost = h.warnings().filter((w) => w.includes('lost the connection'));
  const back = h.warnings().filter((w) => w.includes('is back'));
  assert.equal(lost.length, 1);
  assert.equal(back.length, 1);
  assert.equal(h.warnings().length, 2, `no other warnings: ${h.warnings().join(' | ')}`);
  assert.equal(h.transport.stats.attempt, 0, 'backoff reset once established');
});

test('overflow while offline: after hello comes one gap marker stamped at the first lost event, then the backlog in order', async (t) => {
  const port = await freePort();
  const h = harness(`ws://127.0.0.1:${port}/reticle`, { queueLimit: 5 });
  t.after(() => h.transport.stop());
  h.transport.start();
  await waitFor(() => h.transport.state === 'waiting');
  const sent = [];
  for (let i = 0; i < 8; i += 1) {
    h.clock.advance(10);
    const e = h.event(i % 3 === 0 ? 'page.health' : 'signal');
    sent.push(e);
    h.transport.sendEvent(e);
  }
  // page.health at i=0,3,6 is churn: the first three evicted are churn, oldest first
  const daemon = await startDaemonStandIn({ port });
  t.after(() => daemon.close());
  h.clock.advance(h.transport.stats.lastDelayMs);
  await waitFor(() => daemon.frames().length >= 7, { what: 'hello + marker + 5 events' });
  const frames = daemon.frames();
  assert.equal(frames[0].kind, 'hello');
  assert.equal(frames[1].event.type, 'transport.overflow');
  assert.equal(frames[1].event.data.dropped, 3);
  assert.equal(frames[1].event.t, sent[0].t, 'stamped with the time of the first event that was lost');
  const replayed = frames.slice(2).map((f) => f.event.data.n);
  assert.deepEqual(replayed, [1, 2, 4, 5, 7], 'survivors in their original order');
});

test('what was sent on a socket refused before it was established is queued again, not lost', async (t) => {
  let refuse = true;
  const daemon = await startDaemonStandIn({
    onHello: (conn) => {
      if (refuse) setImmediate(() => conn.socket.close(1008, 'authentication failed'));
    },
  });
  t.after(() => daemon.close());
  const h = harness(daemon.url, { random: () => 0 });
  t.after(() => h.transport.stop());
  h.transport.sendEvent(h.event('signal'));
  h.transport.sendEvent(h.event('signal'));
  h.transport.start();
  await waitFor(() => h.transport.stats.refusals === 1 && h.transport.state === 'waiting');
  assert.equal(h.outbox.size, 2, 'both events are back in the queue');
  refuse = false;
  h.clock.advance(h.transport.stats.lastDelayMs);
  await waitFor(() => daemon.connections[1] && daemon.connections[1].frames.length >= 3, { what: 'replay on the accepted socket' });
  assert.deepEqual(daemon.connections[1].frames.map((f) => f.kind), ['hello', 'event', 'event']);
});

test('stop() closes with 1000 and schedules nothing more', async (t) => {
  const daemon = await startDaemonStandIn();
  t.after(() => daemon.close());
  const h = harness(daemon.url);
  h.transport.start();
  await waitFor(() => h.transport.state === 'open');
  h.transport.stop();
  await waitFor(() => daemon.connections[0].closed);
  assert.equal(h.clock.pendingCount(), 0);
  assert.equal(h.transport.state, 'stopped');
});

test('a WebSocket constructor that throws counts as a failed attempt and is retried', async () => {
  const clock = manualClock();
  const { sink } = recordingConsole();
  let calls = 0;
  function Throwing() {
    calls += 1;
    throw new Error('mixed content');
  }
  const transport = createTransport({
    url: 'ws://127.0.0.1:1/reticle',
    WebSocketImpl: Throwing,
    clock,
    log: createSdkLog(sink),
    outbox: createOutbox(),
    buildHello: () => ({}),
    encodeGapMarker: () => null,
    onFrame: () => {},
    random: () => 0.5,
  });
  transport.start();
  assert.equal(transport.state, 'waiting');
  clock.advance(transport.stats.lastDelayMs);
  assert.equal(calls, 2);
  transport.stop();
});

test('a flood on a socket refused before it was established keeps a queue\'s worth and counts the rest', async (t) => {
  let refuse = true;
  const daemon = await startDaemonStandIn({
    onHello: (conn) => {
      // refuse only once all 25 events have arrived on this never-established socket
      if (refuse) conn.socket.on('message', () => conn.frames.length === 26 && conn.socket.close(1008, 'authentication failed'));
    },
  });
  t.after(() => daemon.close());
  const h = harness(daemon.url, { random: () => 0, queueLimit: 10 });
  t.after(() => h.transport.stop());
  h.transport.start();
  await waitFor(() => h.transport.state === 'open');
  for (let i = 0; i < 25; i += 1) h.transport.sendEvent(h.event('signal'));
  await waitFor(() => h.transport.stats.refusals === 1 && h.transport.state === 'waiting');
  assert.equal(h.outbox.size, 10);
  assert.equal(h.outbox.peekGap().dropped, 15);
  refuse = false;
  h.clock.advance(h.transport.stats.lastDelayMs);
  await waitFor(() => daemon.connections[1] && daemon.connections[1].frames.length >= 12, { what: 'hello + marker + 10' });
  const frames = daemon.connections[1].frames;
  assert.equal(frames[1].event.type, 'transport.overflow');
  assert.equal(frames[1].event.data.dropped, 15);
  assert.deepEqual(frames.slice(2).map((f) => f.event.data.n), [15, 16, 17, 18, 19, 20, 21, 22, 23, 24]);
});
