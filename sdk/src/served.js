// served.js — connecting a page that loaded the SDK from the daemon itself
// (`import('http://127.0.0.1:4400/sdk/reticle.js')`), with no port or token in the code.
//
// Owns: telling whether a module URL is the daemon's (`servedBy`), and pairing through the
// daemon's `/sdk/pairing` before connecting (`pairThenConnect`): the daemon gives the token only
// to pages on a loopback origin (docs/security.md, "The served SDK").
// Must not: throw into the page, or connect anywhere but the daemon that served the module.

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** The daemon that served `moduleUrl`, as `{port, pairing}`, or null when no daemon did. */
export function servedBy(moduleUrl) {
  let url;
  try {
    url = new URL(moduleUrl);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' || !LOOPBACK_HOSTS.has(url.hostname) || !url.pathname.startsWith('/sdk/')) return null;
  return { port: Number(url.port || 80), pairing: `${url.origin}/sdk/pairing` };
}

/** Whether `connect(options)` left the pairing to the serving daemon (no token, port or url). */
export function leavesPairing(options) {
  return Boolean(options) && typeof options === 'object' && options.token === undefined && options.port === undefined && options.url === undefined;
}

/**
 * Fetches the token from `served.pairing`, then calls `connectNow` with the port and token.
 * Answers at once with `{ok: true, pending: 'pairing', port}`; a pairing that fails is warned
 * once through `warn`.
 */
export function pairThenConnect({ served, options, connectNow, fetchImpl, warn }) {
  Promise.resolve()
    .then(() => fetchImpl(served.pairing, { cache: 'no-store', credentials: 'omit' }))
    .then((res) => (res.ok ? res.json() : Promise.reject(new Error(`the daemon refused the pairing (HTTP ${res.status})`))))
    .then((body) => {
      const connected = connectNow({ ...options, port: served.port, token: body.token });
      if (!connected.ok) warn(`could not connect: ${connected.reason}`);
    })
    .catch((err) => warn(`could not pair with the daemon at ${served.pairing}: ${err && err.message ? err.message : String(err)}`));
  return { ok: true, pending: 'pairing', port: served.port };
}
