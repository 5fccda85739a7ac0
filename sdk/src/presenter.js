// presenter.js — the optional on-page badge (`connect({present:true})`).
//
// Owns: a small fixed badge in a closed shadow root showing the connection state and the last
// narration, and the `presenter` / `narrate` command effects on it.
// Must not: appear in snapshots, queries or DOM events (it carries OWN_UI_ATTR), take focus or
// intercept clicks, or load anything from the network.

import { OWN_UI_ATTR } from './protocol.js';

const STATE_TEXT = {
  idle: 'starting',
  connecting: 'connecting…',
  open: 'connected',
  waiting: 'reconnecting…',
  stopped: 'disconnected',
};

export function createPresenter(win) {
  const doc = win.document;
  let host = null;
  let label = null;
  let note = null;
  let agentState = 'active';
  let connection = 'idle';

  function render() {
    if (!label) return;
    label.textContent = `Reticle · ${STATE_TEXT[connection] || connection}${agentState !== 'active' ? ` · ${agentState}` : ''}`;
  }

  return {
    mount() {
      if (host || !doc.body) return;
      host = doc.createElement('div');
      host.setAttribute(OWN_UI_ATTR, 'badge');
      host.style.cssText = 'position:fixed;right:8px;bottom:8px;z-index:2147483647;pointer-events:none;';
      const root = typeof host.attachShadow === 'function' ? host.attachShadow({ mode: 'closed' }) : host;
      const box = doc.createElement('div');
      box.style.cssText =
        'font:12px/1.4 system-ui,sans-serif;background:rgba(20,20,28,.85);color:#fff;padding:4px 8px;border-radius:6px;max-width:320px;';
      label = doc.createElement('div');
      note = doc.createElement('div');
      note.style.cssText = 'opacity:.8;';
      box.append(label, note);
      root.append(box);
      doc.body.append(host);
      render();
    },
    unmount() {
      if (host) host.remove();
      host = null;
      label = null;
      note = null;
    },
    get mounted() {
      return Boolean(host);
    },
    setConnection(state) {
      connection = state;
      render();
    },
    setAgentState(state, text) {
      agentState = state;
      if (note && typeof text === 'string') note.textContent = text.slice(0, 200);
      render();
    },
    narrate(text) {
      if (!note) return false;
      note.textContent = String(text).slice(0, 200);
      return true;
    },
  };
}
