// config.js — how a fixture page learns where the daemon is: its own query string.
//
// Owns: `readReticleConfig(search)` → `{port, token, session, sameOriginFrame, stuckCounter}` from
// `?reticlePort=P&reticleToken=T&session=S&sameOriginFrame=1&stuckCounter=1`, and
// `connectOptions(config)`.
// Must not: hold a port or a token of its own; nothing secret is ever committed with the app.

export function readReticleConfig(search) {
  const params = new URLSearchParams(search || '');
  const port = params.get('reticlePort');
  return {
    port: port === null || port === '' ? null : Number(port),
    token: params.get('reticleToken') || undefined,
    session: params.get('session') || undefined,
    sameOriginFrame: params.get('sameOriginFrame') === '1',
    stuckCounter: params.get('stuckCounter') === '1',
  };
}

export function connectOptions(config) {
  return { port: config.port, token: config.token, session: config.session, present: false };
}
