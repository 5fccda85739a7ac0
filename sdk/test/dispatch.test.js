import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCommandFrame, createDispatcher, encodeResult } from '../src/dispatch.js';

const SESSION = 's-page';

test('a well-formed command runs', () => {
  const p = parseCommandFrame(JSON.stringify({ kind: 'command', id: 'c1', sessionId: SESSION, name: 'query', args: { testid: 'x' } }), SESSION);
  assert.deepEqual(p, { action: 'run', id: 'c1', name: 'query', args: { testid: 'x' } });
  const noSession = parseCommandFrame(JSON.stringify({ kind: 'command', id: 'c2', name: 'snapshot' }), SESSION);
  assert.equal(noSession.action, 'run');
  assert.deepEqual(noSession.args, {});
});

test('refusals carry the id: foreign session, wrong kind, bad args, bad name, broken JSON with an id', () => {
  const foreign = parseCommandFrame(JSON.stringify({ kind: 'command', id: 'c3', sessionId: 's-other', name: 'snapshot' }), SESSION);
  assert.equal(foreign.action, 'refuse');
  assert.match(foreign.error, /addressed to session 's-other' but this page is session 's-page'.*Nothing ran/);
  const kind = parseCommandFrame(JSON.stringify({ kind: 'event', id: 'c4' }), SESSION);
  assert.match(kind.error, /only accepts 'command'/);
  const args = parseCommandFrame(JSON.stringify({ kind: 'command', id: 'c5', name: 'act', args: [] }), SESSION);
  assert.match(args.error, /args must be a JSON object \(got an array\)/);
  const name = parseCommandFrame(JSON.stringify({ kind: 'command', id: 'c6', name: '' }), SESSION);
  assert.equal(name.action, 'refuse');
  const broken = parseCommandFrame('{"kind":"command","id":"c7","name":"snap', SESSION);
  assert.equal(broken.action, 'refuse');
  assert.equal(broken.id, 'c7');
  assert.match(broken.error, /could not parse/);
});

test('silence only when no usable id exists', () => {
  assert.equal(parseCommandFrame('not json at all', SESSION).action, 'ignore');
  assert.equal(parseCommandFrame(JSON.stringify({ kind: 'command', id: 'x'.repeat(129), name: 'q' }), SESSION).action, 'ignore');
  assert.equal(parseCommandFrame(JSON.stringify({ kind: 'command', id: 7, name: 'q' }), SESSION).action, 'ignore');
  assert.equal(parseCommandFrame('[1,2]', SESSION).action, 'ignore');
  assert.equal(parseCommandFrame(new Uint8Array([123]), SESSION).action, 'ignore');
});

test('the dispatcher answers unknown commands by name, catches handler throws, runs `after` once replied', async () => {
  const replies = [];
  const order = [];
  const dispatcher = createDispatcher({
    handlers: {
      boom: () => {
        throw new Error('kaput');
      },
      nav: () => ({ ok: true, result: { ok: true }, after: () => order.push('after') }),
      slow: () => new Promise((resolve) => setImmediate(() => resolve({ ok: true, result: { slow: true } }))),
      fast: () => ({ ok: true, result: { fast: true } }),
    },
    context: () => ({}),
    sessionId: () => SESSION,
    reply: (text) => {
      replies.push(JSON.parse(text));
      order.push('reply');
    },
    afterReply: (fn) => fn(),
  });
  await dispatcher(JSON.stringify({ kind: 'command', id: 'c1', name: 'nope' }));
  assert.deepEqual(replies.pop(), { kind: 'command_result', id: 'c1', ok: false, error: "unknown command 'nope'" });
  await dispatcher(JSON.stringify({ kind: 'command', id: 'c2', name: 'boom' }));
  assert.match(replies.pop().error, /command 'boom' failed in the page: kaput/);
  order.length = 0;
  await dispatcher(JSON.stringify({ kind: 'command', id: 'c3', name: 'nav' }));
  assert.deepEqual(order, ['reply', 'after']);
  await dispatcher(JSON.stringify({ kind: 'command', id: 'c4', name: 'toString' }));
  assert.match(replies.pop().error, /unknown command 'toString'/, 'no prototype lookups');
  // concurrency: a slow command does not hold up a fast one
  replies.length = 0;
  await Promise.all([dispatcher(JSON.stringify({ kind: 'command', id: 's', name: 'slow' })), dispatcher(JSON.stringify({ kind: 'command', id: 'f', name: 'fast' }))]);
  assert.deepEqual(replies.map((r) => r.id), ['f', 's']);
});

test('oversized results become a refusal instead of a frame the daemon would close on', () => {
  const huge = { ok: true, result: { parts: Array.from({ length: 150 }, () => 'x'.repeat(60000)) } };
  const text = encodeResult('c9', huge);
  const parsed = JSON.parse(text);
  assert.ok(text.length < 1024 * 1024);
  // the serializer's string budget already trims it; either way the frame fits
  assert.equal(parsed.id, 'c9');
  const err = JSON.parse(encodeResult('c10', { ok: false, error: 'e'.repeat(10000) }));
  assert.ok(err.error.length <= 4096);
});
