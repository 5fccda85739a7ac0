// reticle.js — the SDK's public entry point, served to pages as /sdk/reticle.js (an ES module).
//
// Owns: the page-wide singleton and the public API: connect(options), disconnect(),
// signal(name, data), registerStore(name, getState), status(); plus createReticle for tests and
// for pages that want their own instance.
// Must not: throw into the page. Every function returns `{ok, ...}`; a refusal says why.
//
//   import { connect, signal, registerStore } from '/sdk/reticle.js';
//   connect({ port: 4400, token: '<pairing token>', session: 'my-tab', present: false });

import { createReticle } from './src/core.js';

const INSTANCE_KEY = Symbol.for('reticle-rs.sdk.instance');

function instance() {
  const g = globalThis;
  if (!g[INSTANCE_KEY]) g[INSTANCE_KEY] = createReticle({ win: g });
  return g[INSTANCE_KEY];
}

function guarded(fn) {
  try {
    return fn();
  } catch (err) {
    return { ok: false, reason: `reticle: ${err && err.message ? err.message : String(err)}` };
  }
}

/**
 * Opens (and keeps open) the connection to the local Reticle daemon.
 * @param {{port?: number, url?: string, token?: string, session?: string, present?: boolean, projectId?: string}} [options]
 */
export function connect(options = {}) {
  return guarded(() => instance().connect(options));
}

export function disconnect() {
  return guarded(() => instance().disconnect());
}

/** Emits a `signal` event: a named fact the app wants an agent to be able to wait for. */
export function signal(name, data) {
  return guarded(() => instance().signal(name, data));
}

/** Makes `getState()` readable through the `state_read` command under `name`. */
export function registerStore(name, getState) {
  return guarded(() => instance().registerStore(name, getState));
}

export function status() {
  return guarded(() => instance().status());
}

export { createReticle };

export default { connect, disconnect, signal, registerStore, status };
