// The golden protocol 1 messages (reticle/src/wire/fixtures/), which the daemon's tests read too
// (reticle/tests/wire_golden.rs): the hello and event this SDK sends have the fields of the golden
// ones, spelled alike; it reads the golden command as the daemon means it and writes the golden
// command result. The control runs the same checks on the edited copies in edits.json, which the
// daemon's tests must refuse as well.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createReticle } from '../src/core.js';
import { encodeResult, parseCommandFrame } from '../src/dispatch.js';
import { captureClock } from '../src/natives.js';
import { makePage, startDaemonStandIn, waitFor, WebSocket } from '../test-support/helpers.js';

const FIXTURES = new URL('../../reticle/src/wire/fixtures/', import.meta.url);
const read = (name) => readFileSync(new URL(name, FIXTURES), 'utf8');

/** A value's type as JSON names it. */
const jsonType = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/** Each field of an object with its JSON type, in key order (payloads stay opaque). */
function fields(object) {
  return Object.keys(object ?? {})
    .sort()
    .map((key) => `${key}:${jsonType(object[key])}`);
}

/** What the SDK sent, read once from a real SDK on a page against a stand-in daemon. */
async function sdkFrames(t) {
  const golden = JSON.parse(read('hello.json'));
  const daemon = await startDaemonStandIn();
  const win = makePage(`<!doctype html><html><head><title>${golden.title}</title></head><body><button data-testid="golden">Golden</button></body></html>`);
  for (const level of ['log', 'info', 'debug', 'warn', 'error']) win.console[level] = () => {};
  const sdk = createReticle({ win, WebSocketImpl: WebSocket, clock: captureClock(globalThis), settle: { quietMs: 0, maxMs: 50 }, random: () => 0.5 });
  t.after(async () => {
    sdk.disconnect();
    await daemon.close();
  });
  const status = sdk.connect({ port: daemon.port, token: golden.token, session: golden.sessionId, projectId: golden.projectId, present: false });
  assert.equal(status.ok, true, status.reason);
  const conn = await waitFor(() => daemon.connections[0]?.frames.length && daemon.connections[0], { what: 'hello' });
  win.document.querySelector('[data-testid=golden]').setAttribute('data-state', 'on');
  const event = await waitFor(() => conn.frames.find((f) => f.kind === 'event' && f.event?.type === 'dom.attr'), { what: 'a dom.attr event' });
  const commandText = read('command.json');
  conn.socket.send(commandText);
  const commandId = JSON.parse(commandText).id;
  const result = await waitFor(() => conn.frames.find((f) => f.kind === 'command_result' && f.id === commandId), { what: 'the golden command answered' });
  return { hello: conn.frames[0], event, result };
}

/** Every way `text` (a golden hello) differs from the hello the SDK sent. */
function helloProblems(text, sent) {
  const golden = JSON.parse(text);
  const problems = [];
  if (golden.kind !== sent.kind) problems.push(`kind ${golden.kind}, sent ${sent.kind}`);
  if (golden.protocolVersion !== sent.protocolVersion) problems.push('protocol version');
  if (fields(golden).join() !== fields(sent).join()) problems.push(`fields ${fields(golden)}, sent ${fields(sent)}`);
  return problems;
}

/** Every way `text` (a golden event) differs from the event the SDK sent. */
function eventProblems(text, sent) {
  const golden = JSON.parse(text);
  const problems = [];
  if (golden.kind !== sent.kind) problems.push(`kind ${golden.kind}, sent ${sent.kind}`);
  if (fields(golden).join() !== fields(sent).join()) problems.push(`envelope ${fields(golden)}, sent ${fields(sent)}`);
  if (fields(golden.event).join() !== fields(sent.event).join()) problems.push(`event ${fields(golden.event)}, sent ${fields(sent.event)}`);
  return problems;
}

/** Every way the SDK misreads `text` (a golden command): addressed to its session it runs with
 *  the command's id, name and args; addressed to another session it is refused. */
function commandProblems(text) {
  const golden = JSON.parse(text);
  const problems = [];
  const mine = parseCommandFrame(text, golden.sessionId);
  if (mine.action !== 'run') problems.push(`not run: ${mine.error ?? mine.reason}`);
  else {
    if (mine.id !== golden.id) problems.push('id');
    if (mine.name !== golden.name) problems.push('name');
    try {
      assert.deepEqual(mine.args, golden.args);
    } catch {
      problems.push('args');
    }
  }
  if (parseCommandFrame(text, 'another-session').action === 'run') problems.push('run though addressed to another session');
  return problems;
}

/** Every way the result the SDK writes for `text`'s id and result differs from `text`. */
function resultProblems(text) {
  const golden = JSON.parse(text);
  const written = JSON.parse(encodeResult(golden.id, { ok: true, result: golden.result }));
  try {
    assert.deepEqual(written, golden);
    return [];
  } catch {
    return [`wrote ${JSON.stringify(written)}`];
  }
}

function problemsOf(name, text, sent) {
  switch (name) {
    case 'hello.json':
      return helloProblems(text, sent.hello);
    case 'event.json':
      return eventProblems(text, sent.event);
    case 'command.json':
      return commandProblems(text);
    case 'command_result.json':
      return resultProblems(text);
    default:
      throw new Error(`no check for the fixture ${name}`);
  }
}

const GOLDEN = ['hello.json', 'command.json', 'command_result.json', 'event.json'];

test('the SDK speaks every golden message as written', async (t) => {
  const sent = await sdkFrames(t);
  for (const name of GOLDEN) assert.deepEqual(problemsOf(name, read(name), sent), [], name);
  // The golden command ran for real on the page, under its id.
  assert.equal(sent.result.ok, true, sent.result.error);
  assert.equal(sent.result.result.count, 1);
});

test('control: every edited copy in edits.json is refused', async (t) => {
  const sent = await sdkFrames(t);
  const { edits } = JSON.parse(read('edits.json'));
  assert.ok(edits.length >= GOLDEN.length, 'too few edits to be a control');
  for (const { fixture, from, to } of edits) {
    const text = read(fixture);
    assert.ok(text.includes(from), `the edit ${from} no longer applies to ${fixture}`);
    const edited = text.replace(from, to);
    assert.notDeepEqual(problemsOf(fixture, edited, sent), [], `${fixture} with ${from} edited into ${to} went unnoticed`);
  }
});
