// iframe.js — the sandboxed frame's behaviour: `startFrame(win, reticle)`.
//
// Owns: finding the daemon config (own query string first, else a message from the parent),
// connecting the SDK once, and one button that logs and signals.
// Must not: read storage itself (it would throw here); the SDK's fallback is what is under test.

import { connectOptions, readReticleConfig } from './config.js';

export function startFrame(win, reticle) {
  const doc = win.document;
  const status = doc.querySelector('[data-testid="frame-status"]');
  let started = false;

  function start(config) {
    if (started) return;
    if (config.port === null || !Number.isInteger(config.port)) {
      status.textContent = 'Frame not connected: no valid reticlePort';
      return;
    }
    started = true;
    win.__reticleStatus = () => reticle.status(); // for the harness: the session this frame is connected as
    const result = reticle.connect(connectOptions(config));
    status.textContent = result.ok
      ? `Frame connected as ${result.sessionId} (storage: ${result.storage})`
      : `Frame not connected: ${result.reason}`;
  }

  doc.querySelector('[data-testid="frame-button"]').addEventListener('click', () => {
    win.console.log('fixture frame: button clicked');
    reticle.signal('frame.clicked', {});
  });

  const own = readReticleConfig(win.location.search);
  if (own.port !== null) {
    start(own);
    return;
  }
  win.addEventListener('message', (ev) => {
    if (ev.source !== win.parent || !ev.data || ev.data.type !== 'reticle-config') return;
    const port = ev.data.reticlePort;
    start({ port: port === null || port === undefined ? null : Number(port), token: ev.data.reticleToken || undefined, session: ev.data.session || undefined });
  });
  if (win.parent && win.parent !== win) win.parent.postMessage({ type: 'reticle-config-request' }, '*');
}
