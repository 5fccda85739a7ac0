// commands/state.js — app stores the page registered, and `state_read` over them.
//
// Owns: `createStoreRegistry()` (`register(name, getState)` → unregister) and
// `readState(ctx, args)` for `state_read {store?, path?, depth?, ref?}`.
// A wrong store or path is an answer, not an error: `found:false` with the keys that do exist.
// Must not: call a store's getState outside a try (a throwing getter is reported), nor return
// unbounded values (depth and size limits apply through the serializer).

import { CommandLimits, Limits, SerializeLimits } from '../protocol.js';
import { REDACTED, isSensitiveKey, toWireValue } from '../serialize.js';


export function createStoreRegistry() {
  const stores = new Map();
  return {
    register(name, getState) {
      if (typeof name !== 'string' || name.length === 0 || name.length > Limits.MAX_STORE_NAME) {
        return { ok: false, reason: `store name must be a string of 1..${Limits.MAX_STORE_NAME} characters` };
      }
      if (typeof getState !== 'function') return { ok: false, reason: 'registerStore needs a getState function' };
      stores.set(name, getState);
      return { ok: true, unregister: () => stores.get(name) === getState && stores.delete(name) };
    },
    names: () => Array.from(stores.keys()),
    get: (name) => stores.get(name),
    get size() {
      return stores.size;
    },
  };
}

/** "a.b[0].c" → ['a', 'b', '0', 'c']; arrays pass through as strings. */
export function parsePath(path) {
  if (path === undefined || path === null || path === '') return { ok: true, segments: [] };
  if (Array.isArray(path)) return { ok: true, segments: path.map(String) };
  if (typeof path !== 'string') return { ok: false, error: "state_read 'path' must be a string like 'user.name' or 'items[0].id'" };
  const segments = [];
  const re = /([^.[\]]+)|\[(\d+|"[^"]*"|'[^']*')\]/g;
  let m;
  while ((m = re.exec(path)) !== null) {
    segments.push(m[1] !== undefined ? m[1] : m[2].replace(/^["']|["']$/g, ''));
  }
  return { ok: true, segments };
}

function keysOf(value) {
  if (value instanceof Map) return Array.from(value.keys()).map(String);
  if (value && typeof value === 'object') {
    try {
      return Object.keys(value);
    } catch {
      return [];
    }
  }
  return [];
}

function step(value, key) {
  if (value instanceof Map) return value.has(key) ? { ok: true, value: value.get(key) } : { ok: false };
  if (value !== null && typeof value === 'object' && Object.prototype.hasOwnProperty.call(value, key)) {
    try {
      return { ok: true, value: value[key] };
    } catch (err) {
      return { ok: false, threw: err && err.message ? err.message : String(err) };
    }
  }
  return { ok: false };
}

function callGetState(getState) {
  try {
    return { ok: true, value: getState() };
  } catch (err) {
    return { ok: false, error: `getState() threw: ${err && err.message ? err.message : String(err)}` };
  }
}

export function readState(ctx, args = {}) {
  const { stores } = ctx;
  if (args.store !== undefined && typeof args.store !== 'string') return { ok: false, error: "state_read 'store' must be a string" };
  let depth = CommandLimits.STATE_DEFAULT_DEPTH;
  if (args.depth !== undefined) {
    const n = Number(args.depth);
    if (!Number.isInteger(n) || n < 0) return { ok: false, error: "state_read 'depth' must be a non-negative integer" };
    depth = Math.min(n, SerializeLimits.MAX_DEPTH);
  }
  const storeNames = stores.names();
  if (args.ref !== undefined && args.store === undefined) {
    return {
      ok: true,
      result: { found: false, ref: args.ref, storeNames, reason: 'component state needs a framework adapter and none is registered; read a store instead' },
    };
  }
  if (args.store === undefined) {
    if (args.path !== undefined && args.path !== '') return { ok: false, error: "state_read 'path' needs 'store' too" };
    const all = {};
    for (const name of storeNames) {
      const got = callGetState(stores.get(name));
      all[name] = got.ok ? toWireValue(got.value, { maxDepth: depth + 1 }) : { error: got.error };
    }
    return { ok: true, result: { stores: all, storeNames } };
  }
  const getState = stores.get(args.store);
  if (!getState) {
    return {
      ok: true,
      result: { store: args.store, path: args.path ?? '', found: false, availableKeys: storeNames, storeNames, reason: `no store named '${args.store}'` },
    };
  }
  const parsed = parsePath(args.path);
  if (!parsed.ok) return { ok: false, error: parsed.error };
  const got = callGetState(getState);
  if (!got.ok) return { ok: true, result: { store: args.store, path: args.path ?? '', found: false, storeNames, reason: got.error } };
  let value = got.value;
  for (let i = 0; i < parsed.segments.length; i += 1) {
    const key = parsed.segments[i];
    const next = step(value, key);
    if (!next.ok) {
      const resolved = parsed.segments.slice(0, i).join('.');
      return {
        ok: true,
        result: {
          store: args.store,
          path: args.path,
          found: false,
          resolvedPath: resolved,
          missing: key,
          availableKeys: keysOf(value).slice(0, CommandLimits.STATE_MAX_KEYS_LISTED),
          storeNames,
          reason: next.threw
            ? `reading '${key}' threw: ${next.threw}`
            : `'${key}' is not a key of ${resolved ? `'${resolved}'` : 'the store'}${value === null || typeof value !== 'object' ? ` (it is ${value === null ? 'null' : typeof value})` : ''}`,
        },
      };
    }
    value = next.value;
  }
  return {
    ok: true,
    result: {
      store: args.store,
      path: args.path ?? '',
      found: true,
      value: parsed.segments.some(isSensitiveKey) ? REDACTED : toWireValue(value, { maxDepth: depth + 1 }),
      storeNames,
    },
  };
}
