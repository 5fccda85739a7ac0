// dispatch.js — from a raw daemon frame to exactly one `command_result` (or a reasoned silence).
//
// Owns: parsing and checking a command frame, refusing what cannot run (not JSON, wrong shape,
// addressed to another session, unknown name) with `ok:false` whenever an id can be recovered,
// running the handler with every exception caught, and encoding the result within the limits.
// Must not: run anything for a frame it refused, or reply with an id the daemon would reject
// (an id that is not a 1..128 character string gets no reply: there is nothing to address).

import { Limits, MessageKind } from './protocol.js';
import { clip, encodeFrame, toWireValue } from './serialize.js';

const NOTHING_RAN = 'Nothing ran.';

function validId(id) {
  return typeof id === 'string' && id.length >= 1 && id.length <= Limits.MAX_COMMAND_ID;
}

/** Best effort: find `"id":"..."` in text that is not valid JSON. */
function recoverId(text) {
  const m = /"id"\s*:\s*"((?:[^"\\]|\\.){1,128})"/.exec(text);
  if (!m) return null;
  try {
    const id = JSON.parse(`"${m[1]}"`);
    return validId(id) ? id : null;
  } catch {
    return null;
  }
}

function frameText(raw) {
  if (typeof raw === 'string') return raw;
  try {
    if (raw instanceof ArrayBuffer) return new TextDecoder().decode(new Uint8Array(raw));
    if (ArrayBuffer.isView(raw)) return new TextDecoder().decode(raw);
  } catch {
    return null;
  }
  return null;
}

/**
 * @returns {{action: 'run', id: string, name: string, args: object}
 *   | {action: 'refuse', id: string, error: string}
 *   | {action: 'ignore', reason: string}}
 */
export function parseCommandFrame(raw, sessionId) {
  const text = frameText(raw);
  if (text === null) return { action: 'ignore', reason: 'binary frame this SDK cannot read' };
  let msg;
  try {
    msg = JSON.parse(text);
  } catch {
    const id = recoverId(text);
    return id
      ? { action: 'refuse', id, error: `this page could not parse the command (not valid JSON); daemon and SDK may speak different versions. ${NOTHING_RAN}` }
      : { action: 'ignore', reason: 'frame is not JSON and carries no recoverable id' };
  }
  if (!msg || typeof msg !== 'object' || Array.isArray(msg)) return { action: 'ignore', reason: 'frame is not a JSON object' };
  const id = msg.id;
  if (!validId(id)) return { action: 'ignore', reason: `frame has no usable id (must be a string of 1..${Limits.MAX_COMMAND_ID} characters)` };
  if (msg.kind !== MessageKind.COMMAND) {
    return { action: 'refuse', id, error: `this page only accepts '${MessageKind.COMMAND}' messages (got kind '${String(msg.kind).slice(0, 64)}'). ${NOTHING_RAN}` };
  }
  if (msg.sessionId !== undefined && msg.sessionId !== null && msg.sessionId !== sessionId) {
    return {
      action: 'refuse',
      id,
      error: `command addressed to session '${String(msg.sessionId).slice(0, 128)}' but this page is session '${sessionId}'. ${NOTHING_RAN}`,
    };
  }
  const name = msg.name;
  if (typeof name !== 'string' || name.length === 0 || name.length > Limits.MAX_COMMAND_NAME) {
    return { action: 'refuse', id, error: `command name must be a string of 1..${Limits.MAX_COMMAND_NAME} characters. ${NOTHING_RAN}` };
  }
  const args = msg.args === undefined || msg.args === null ? {} : msg.args;
  if (typeof args !== 'object' || Array.isArray(args)) {
    return { action: 'refuse', id, error: `command '${name}' args must be a JSON object (got ${Array.isArray(args) ? 'an array' : typeof args}). ${NOTHING_RAN}` };
  }
  return { action: 'run', id, name, args };
}

export function encodeResult(id, outcome) {
  const base = { kind: MessageKind.COMMAND_RESULT, id };
  if (outcome.ok) {
    const text = encodeFrame({ ...base, ok: true, result: toWireValue(outcome.result) });
    if (text) return text;
    return encodeFrame({ ...base, ok: false, error: `the result is larger than the ${Limits.MAX_FRAME_BYTES}-byte frame limit; narrow the request (scope, limit, path)` });
  }
  return encodeFrame({ ...base, ok: false, error: clip(String(outcome.error || 'command failed without a reason'), Limits.MAX_ERROR) });
}

/**
 * @param {object} o
 * @param {Record<string, Function>} o.handlers
 * @param {() => object} o.context              handler context, built per command
 * @param {() => string} o.sessionId
 * @param {(text: string) => void} o.reply
 * @param {(fn: Function) => void} o.afterReply  runs `fn` once the reply has been handed over
 */
export function createDispatcher({ handlers, context, sessionId, reply, afterReply }) {
  return async function handleFrame(raw) {
    const parsed = parseCommandFrame(raw, sessionId());
    if (parsed.action === 'ignore') return parsed;
    if (parsed.action === 'refuse') {
      reply(encodeResult(parsed.id, { ok: false, error: parsed.error }));
      return parsed;
    }
    const handler = Object.prototype.hasOwnProperty.call(handlers, parsed.name) ? handlers[parsed.name] : null;
    let outcome;
    if (!handler) {
      outcome = { ok: false, error: `unknown command '${parsed.name}'` };
    } else {
      try {
        outcome = await handler(context(), parsed.args);
      } catch (err) {
        outcome = { ok: false, error: `command '${parsed.name}' failed in the page: ${err && err.message ? err.message : String(err)}` };
      }
      if (!outcome || typeof outcome !== 'object') outcome = { ok: false, error: `command '${parsed.name}' produced no answer` };
    }
    reply(encodeResult(parsed.id, outcome));
    if (outcome.ok && typeof outcome.after === 'function') afterReply(outcome.after);
    return { action: 'ran', id: parsed.id, name: parsed.name, ok: Boolean(outcome.ok) };
  };
}
