// storage.js — per-tab memory that survives a reload: the session id and the ref counter base.
//
// Owns: `openTabStore(win)` (sessionStorage when it works, an in-memory map when it does not),
// `resolveSessionId(...)` and `newSessionId()`.
// Must not: let a storage failure escape. In a sandboxed iframe even reading
// `window.sessionStorage` throws; every access here is guarded and falls back to memory, so
// `connect()` still opens a session (with an id that lives as long as the document).

import { Limits, SESSION_AUTO, SESSION_URL_PARAM, StorageKey } from './protocol.js';

/**
 * @typedef {object} TabStore
 * @property {(key: string) => string | null} get
 * @property {(key: string, value: string) => void} set
 * @property {boolean} persistent  false when the fallback memory map is in use
 * @property {string | null} failure  why sessionStorage is not used, when it is not
 */

/** @returns {TabStore} */
export function openTabStore(win = globalThis) {
  const memory = new Map();
  const fallback = (failure) => ({
    get: (key) => (memory.has(key) ? memory.get(key) : null),
    set: (key, value) => {
      memory.set(key, String(value));
    },
    persistent: false,
    failure,
  });
  let storage;
  try {
    storage = win.sessionStorage; // the getter itself throws in an opaque-origin sandbox
    if (!storage) return fallback('sessionStorage is not available');
    const probe = '__reticle_probe';
    storage.setItem(probe, '1');
    storage.removeItem(probe);
  } catch (err) {
    return fallback(`sessionStorage is not usable here (${describe(err)})`);
  }
  return {
    get(key) {
      try {
        const v = storage.getItem(key);
        if (v !== null) return v;
      } catch {
        // fall through to memory
      }
      return memory.has(key) ? memory.get(key) : null;
    },
    set(key, value) {
      memory.set(key, String(value));
      try {
        storage.setItem(key, String(value));
      } catch {
        // quota or revoked access: memory keeps it for this document
      }
    },
    persistent: true,
    failure: null,
  };
}

function describe(err) {
  return err && (err.name || err.message) ? `${err.name || 'Error'}: ${err.message || ''}`.trim() : 'unknown error';
}

export function newSessionId(cryptoLike = globalThis.crypto) {
  try {
    if (cryptoLike && typeof cryptoLike.randomUUID === 'function') return `s${cryptoLike.randomUUID()}`;
    if (cryptoLike && typeof cryptoLike.getRandomValues === 'function') {
      const bytes = cryptoLike.getRandomValues(new Uint8Array(16));
      return `s${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
    }
  } catch {
    // non-secure context quirks: fall through
  }
  return `s${Date.now().toString(36)}${Math.random().toString(36).slice(2, 12)}`;
}

export function isValidSessionId(id) {
  return typeof id === 'string' && id.length >= 1 && id.length <= Limits.MAX_SESSION_ID;
}

/**
 * Explicit `connect({session})` wins, then the `__reticle_session` URL parameter, then the id this
 * tab already used (sessionStorage), then a new one. The result is written back to the store.
 * @returns {{ok: true, sessionId: string, source: string} | {ok: false, reason: string}}
 */
export function resolveSessionId({ explicit, win = globalThis, store, cryptoLike }) {
  let id = null;
  let source = null;
  if (explicit !== undefined && explicit !== null && explicit !== SESSION_AUTO) {
    if (!isValidSessionId(explicit)) {
      return { ok: false, reason: `session must be a string of 1..${Limits.MAX_SESSION_ID} characters` };
    }
    id = explicit;
    source = 'explicit';
  }
  if (!id) {
    const fromUrl = readUrlParam(win, SESSION_URL_PARAM);
    if (isValidSessionId(fromUrl)) {
      id = fromUrl;
      source = 'url';
    }
  }
  if (!id) {
    const stored = store.get(StorageKey.SESSION_ID);
    if (isValidSessionId(stored)) {
      id = stored;
      source = store.persistent ? 'sessionStorage' : 'memory';
    }
  }
  if (!id) {
    id = newSessionId(cryptoLike ?? win.crypto ?? globalThis.crypto);
    source = 'generated';
  }
  store.set(StorageKey.SESSION_ID, id);
  return { ok: true, sessionId: id, source };
}

function readUrlParam(win, name) {
  try {
    return new URL(win.location.href).searchParams.get(name);
  } catch {
    return null;
  }
}
