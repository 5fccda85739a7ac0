// serialize.js — turns any page value into bounded, JSON-safe, redacted data.
//
// Owns: `toWireValue(value)` (depth, node, item, string-budget limits; cycles; redaction of
// sensitive keys), `redactUrl(url)` and `encodeFrame(message)` (one JSON text under the 1 MiB
// frame limit, or null).
// Must not: throw. Whatever a page hands the SDK (getters that throw, cycles, BigInt, DOM
// nodes, functions) becomes a value or a marker string, never an exception.

import { Limits, SerializeLimits } from './protocol.js';

export const REDACTED = '[REDACTED]';
export const TRUNCATED = '[TRUNCATED]';
export const CIRCULAR = '[CIRCULAR]';

const SENSITIVE_KEY =
  /(pass(word|wd)?$|^pwd$|secret|token|authorization|api[-_]?key|cvv|ssn|card[-_]?number|private[-_]?key|cookie)/i;

export function isSensitiveKey(key) {
  return typeof key === 'string' && SENSITIVE_KEY.test(key);
}

/**
 * @param {unknown} value
 * @param {{maxDepth?: number}} [options]
 */
export function toWireValue(value, options = {}) {
  const maxDepth = options.maxDepth ?? SerializeLimits.MAX_DEPTH;
  const budget = { nodes: 0, chars: 0 };
  const seen = new Set();

  function str(s, limit = SerializeLimits.MAX_STRING) {
    const room = Math.max(0, Math.min(limit, SerializeLimits.MAX_TOTAL_STRING - budget.chars));
    if (s.length <= room) {
      budget.chars += s.length;
      return s;
    }
    budget.chars += room;
    return `${s.slice(0, room)}…${TRUNCATED}`;
  }

  function walk(v, depth, key) {
    if (isSensitiveKey(key) && v !== undefined && v !== null && v !== '') return REDACTED;
    budget.nodes += 1;
    if (budget.nodes > SerializeLimits.MAX_NODES) return TRUNCATED;
    if (v === null || v === undefined) return v === null ? null : undefined;
    switch (typeof v) {
      case 'string':
        return str(v, key === 'error' ? Limits.MAX_ERROR : SerializeLimits.MAX_STRING);
      case 'number':
        return Number.isFinite(v) ? v : null;
      case 'boolean':
        return v;
      case 'bigint':
        return v.toString();
      case 'symbol':
        return v.toString();
      case 'function':
        return `[function ${v.name || 'anonymous'}]`;
      default:
        break;
    }
    if (depth >= maxDepth) return TRUNCATED;
    if (seen.has(v)) return CIRCULAR;
    if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.toISOString();
    if (v instanceof Error) return { name: str(String(v.name)), message: str(String(v.message), Limits.MAX_ERROR) };
    if (typeof v.nodeType === 'number' && typeof v.nodeName === 'string') return `[node ${v.nodeName}]`;
    seen.add(v);
    try {
      if (Array.isArray(v) || ArrayBuffer.isView(v)) {
        const out = [];
        const n = Math.min(v.length, SerializeLimits.MAX_ITEMS);
        for (let i = 0; i < n; i += 1) {
          const item = walk(safeGet(v, i), depth + 1, undefined);
          out.push(item === undefined ? null : item);
        }
        if (v.length > n) out.push(`${TRUNCATED} ${v.length - n} more`);
        return out;
      }
      if (v instanceof Map) return walk(Object.fromEntries(Array.from(v.entries()).slice(0, SerializeLimits.MAX_ITEMS)), depth, key);
      if (v instanceof Set) return walk(Array.from(v).slice(0, SerializeLimits.MAX_ITEMS), depth, key);
      const out = {};
      let keys;
      try {
        keys = Object.keys(v);
      } catch {
        return TRUNCATED;
      }
      const n = Math.min(keys.length, SerializeLimits.MAX_ITEMS);
      for (let i = 0; i < n; i += 1) {
        const k = keys[i];
        const item = walk(safeGet(v, k), depth + 1, k);
        if (item !== undefined) out[k] = item;
      }
      if (keys.length > n) out[TRUNCATED] = `${keys.length - n} more keys`;
      return out;
    } finally {
      seen.delete(v);
    }
  }

  return walk(value, 0, undefined);
}

function safeGet(obj, key) {
  try {
    return obj[key];
  } catch (err) {
    return `[unreadable: ${err && err.message ? err.message : 'getter threw'}]`;
  }
}

/** Replaces the values of sensitive query parameters in a URL string. */
export function redactUrl(url) {
  if (typeof url !== 'string') return '';
  const q = url.indexOf('?');
  if (q < 0) return url;
  const hashAt = url.indexOf('#', q);
  const query = url.slice(q + 1, hashAt < 0 ? undefined : hashAt);
  const rest = hashAt < 0 ? '' : url.slice(hashAt);
  const parts = query.split('&').map((pair) => {
    const eq = pair.indexOf('=');
    if (eq < 0) return pair;
    let name = pair.slice(0, eq);
    try {
      name = decodeURIComponent(name);
    } catch {
      // keep raw
    }
    return isSensitiveKey(name) ? `${pair.slice(0, eq)}=${REDACTED}` : pair;
  });
  return `${url.slice(0, q)}?${parts.join('&')}${rest}`;
}

/** One JSON text for the socket, or null when it cannot be encoded within the frame limit. */
export function encodeFrame(message) {
  let text;
  try {
    text = JSON.stringify(message);
  } catch {
    return null;
  }
  if (typeof text !== 'string') return null;
  // UTF-8 is at most 3 bytes per UTF-16 unit; only measure exactly when near the limit.
  if (text.length * 3 > Limits.MAX_FRAME_BYTES && new TextEncoder().encode(text).length > Limits.MAX_FRAME_BYTES) {
    return null;
  }
  return text;
}

/** Cuts a string to a limit (used for hello url/title and error texts). */
export function clip(text, limit) {
  const s = typeof text === 'string' ? text : String(text ?? '');
  return s.length <= limit ? s : `${s.slice(0, Math.max(0, limit - 1))}…`;
}
