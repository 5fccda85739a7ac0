// observers/bodies.js — response bodies, captured only while a daemon asks for them.
//
// Owns: the capture window (`createBodyCapture(clock)`: `captureFor(ms)`, answered to the
// `net_bodies` command, and `wanted()`), reading one response body bounded in size
// (`readFetchBody`, `readXhrBody`) and redacting the values of sensitive keys in it (`redactBody`).
// Must not: consume the app's response (a fetch body is read from a clone), keep more than
// NetBodyLimits.BODY_CHARS characters of a body, keep a sensitive value, or throw.

import { NetBodyLimits } from '../protocol.js';
import { REDACTED, isSensitiveKey } from '../serialize.js';

/** When capture is on: from `captureFor(ms)` until that much time has passed. */
export function createBodyCapture(clock) {
  let until = -Infinity;
  return {
    captureFor(ms) {
      const span = Math.min(Math.max(0, Number(ms) || 0), NetBodyLimits.CAPTURE_MAX_MS);
      until = Math.max(until, clock.now() + span);
      return span;
    },
    wanted: () => clock.now() < until,
  };
}

const JSON_PAIR = /"((?:[^"\\]|\\.){1,128})"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d[\d.eE+-]*|true|false|null)/g;
const FORM_PAIR = /(^|[&?\s])([\w.-]{1,128})=([^&\s]*)/g;
const OPEN_JSON_PAIR = /"((?:[^"\\]|\\.){1,128})"\s*:\s*"(?:[^"\\]|\\.)*$/;

/** `text` with the values of sensitive keys (JSON pairs and form pairs) replaced. */
export function redactBody(text) {
  return text
    .replace(JSON_PAIR, (pair, key) => (isSensitiveKey(key) ? `"${key}":"${REDACTED}"` : pair))
    .replace(FORM_PAIR, (pair, lead, key) => (isSensitiveKey(key) ? `${lead}${key}=${REDACTED}` : pair))
    .replace(OPEN_JSON_PAIR, (pair, key) => (isSensitiveKey(key) ? `"${key}":"${REDACTED}` : pair));
}

/** `{body, bodyTruncated}`: at most BODY_CHARS characters, redacted (a value cut at the bound too). */
export function boundBody(text, cutShort = false) {
  const raw = String(text);
  const over = raw.length > NetBodyLimits.BODY_CHARS;
  const body = redactBody(over ? raw.slice(0, NetBodyLimits.BODY_CHARS) : raw);
  return { body, bodyTruncated: over || cutShort };
}

/**
 * Reads a fetch response's body from a clone, stopping after READ_BYTES or READ_MS; null when
 * unreadable or too slow.
 */
export function readFetchBody(response, clock) {
  return new Promise((resolve) => {
    const timer = clock.setTimeout(() => resolve(null), NetBodyLimits.READ_MS);
    readClone(response).then((captured) => {
      clock.clearTimeout(timer);
      resolve(captured);
    });
  });
}

async function readClone(response) {
  try {
    const copy = response.clone();
    if (!copy.body || typeof copy.body.getReader !== 'function') return boundBody(await copy.text());
    const reader = copy.body.getReader();
    const decoder = new TextDecoder();
    let text = '';
    let read = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return boundBody(text + decoder.decode());
      read += value.byteLength;
      text += decoder.decode(value, { stream: true });
      if (read > NetBodyLimits.READ_BYTES) {
        reader.cancel().catch(() => {});
        return boundBody(text, true);
      }
    }
  } catch {
    return null;
  }
}

/** An XHR's body when it is text or JSON; null otherwise. */
export function readXhrBody(xhr) {
  try {
    if (xhr.responseType === '' || xhr.responseType === 'text') return boundBody(xhr.responseText);
    if (xhr.responseType === 'json') return boundBody(JSON.stringify(xhr.response));
    return null;
  } catch {
    return null;
  }
}
