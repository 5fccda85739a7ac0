// reticle.js — the SDK's public entry point, served to pages as /sdk/reticle.js (an ES module).
//
// Owns: the page-wide singleton and the public API: connect(options), disconnect(),
// signal(name, data), registerStore(name, getState), status(); plus createReticle for tests and
// for pages that want their own instance. Served by a daemon (`/sdk/reticle.js`), connect()
// without a port or token pairs with that daemon first (`src/served.js`).
// Must not: throw into the page. Every function returns `{ok, ...}`; a refusal says why.
//
//   import { connect, signal, registerStore } from '/sdk/reticle.js';
//   connect({ port: 4400, token: '<pairing token>', session: 'my-tab', present: false });
//
// or, from the daemon that serves it, in one line of the app's development build:
//
//   import('http://127.0.0.1:4400/sdk/reticle.js').then((r) => r.connect({ session: 'my-tab' }));

import { createReticle } from './src/core.js';
import { leavesPairing, pairThenConnect, servedBy } from './src/served.js';

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
  return guarded(() => {
    const served = leavesPairing(options) ? servedBy(import.meta.url) : null;
    if (!served) return instance().connect(options);
    return pairThenConnect({
      served,
      options,
      connectNow: (paired) => instance().connect(paired),
      fetchImpl: (url, init) => globalThis.fetch(url, init),
      warn: (line) => globalThis.console.warn(`[reticle] ${line}`),
    });
  });
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
