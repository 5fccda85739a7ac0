// test-support/helpers.js — shared test tools: a manual clock, bounded polling, jsdom pages,
// and a real WebSocket server on a free loopback port standing in for the daemon.
//
// Owns: test scaffolding only. Must not: be imported by SDK code.

import { JSDOM, VirtualConsole } from 'jsdom';
import { WebSocketServer, WebSocket } from 'ws';

export { WebSocket };

/** A clock whose time moves only when the test says so. */
export function manualClock(start = 1000) {
  let now = start;
  let nextId = 1;
  const timers = new Map();
  const clock = {
    now: () => now,
    wallNow: () => 1_700_000_000_000 + now,
    setTimeout(fn, ms) {
      const id = nextId++;
      timers.set(id, { due: now + Math.max(0, ms || 0), fn, every: null, delay: ms });
      return id;
    },
    clearTimeout(id) {
      timers.delete(id);
    },
    setInterval(fn, ms) {
      const id = nextId++;
      timers.set(id, { due: now + ms, fn, every: ms, delay: ms });
      return id;
    },
    clearInterval(id) {
      timers.delete(id);
    },
    /** Moves time forward, running due timers in order. */
    advance(ms) {
      const target = now + ms;
      for (;;) {
        let next = null;
        for (const [id, t] of timers) if (t.due <= target && (!next || t.due < next[1].due)) next = [id, t];
        if (!next) break;
        const [id, t] = next;
        now = t.due;
        if (t.every) t.due += t.every;
        else timers.delete(id);
        t.fn();
      }
      now = target;
    },
    /** Delays of the timers still waiting (ms as scheduled). */
    pendingDelays() {
      return Array.from(timers.values()).map((t) => t.delay);
    },
    pendingCount: () => timers.size,
  };
  return clock;
}

/** Polls `condition` until it returns a truthy value or the bound passes. */
export async function waitFor(condition, { timeoutMs = 3000, intervalMs = 5, what = 'condition' } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** A jsdom page. Scripts do not run; tests drive the DOM directly. Its console prints nothing. */
export function makePage(html = '<!doctype html><html><head><title>Fixture</title></head><body></body></html>', { url = 'http://127.0.0.1:5173/app?x=1' } = {}) {
  // jsdom's own errors (an exception in a page listener, "not implemented") are recorded on
  // `win.jsdomErrors` instead of printed, so a test can assert on them.
  const virtualConsole = new VirtualConsole();
  const jsdomErrors = [];
  virtualConsole.on('jsdomError', (err) => jsdomErrors.push(err));
  const dom = new JSDOM(html, { url, pretendToBeVisual: true, virtualConsole });
  dom.window.jsdomErrors = jsdomErrors;
  return dom.window;
}

/** A console stand-in that records what is written to it. */
export function recordingConsole() {
  const lines = [];
  const sink = {};
  for (const level of ['log', 'info', 'debug', 'warn', 'error']) {
    sink[level] = (...args) => lines.push({ level, text: args.join(' ') });
  }
  return { sink, lines };
}

/**
 * A WebSocket server on 127.0.0.1 and a free port, recording every connection and frame.
 * `onHello(conn, hello)` may close the socket to play a refusing daemon. Pass `port` to come back
 * on the port of a daemon that was stopped.
 */
export async function startDaemonStandIn({ port: wantedPort = 0, onHello } = {}) {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: wantedPort, path: '/reticle' });
  await new Promise((resolve, reject) => {
    wss.once('listening', resolve);
    wss.once('error', reject);
  });
  const port = wss.address().port;
  const connections = [];
  wss.on('connection', (socket, req) => {
    const conn = { socket, frames: [], closed: false, origin: req.headers.origin };
    connections.push(conn);
    socket.on('message', (data) => {
      const text = data.toString('utf8');
      let msg;
      try {
        msg = JSON.parse(text);
      } catch {
        msg = { unparsable: text };
      }
      conn.frames.push(msg);
      if (msg.kind === 'hello' && onHello) onHello(conn, msg);
    });
    socket.on('close', () => {
      conn.closed = true;
    });
  });
  return {
    port,
    url: `ws://127.0.0.1:${port}/reticle`,
    connections,
    /** All frames across connections, in arrival order per connection. */
    frames: () => connections.flatMap((c) => c.frames),
    events: () => connections.flatMap((c) => c.frames.filter((f) => f.kind === 'event').map((f) => f.event)),
    results: () => connections.flatMap((c) => c.frames.filter((f) => f.kind === 'command_result')),
    live: () => connections.filter((c) => !c.closed),
    send(conn, message) {
      conn.socket.send(typeof message === 'string' ? message : JSON.stringify(message));
    },
    /** Sends a command and waits for its result. */
    async command(conn, name, args = {}, { id, sessionId, timeoutMs = 3000 } = {}) {
      const cmdId = id || `c${Math.random().toString(36).slice(2, 10)}`;
      const hello = conn.frames.find((f) => f.kind === 'hello');
      const msg = { kind: 'command', id: cmdId, sessionId: sessionId ?? hello?.sessionId, name, args };
      conn.socket.send(JSON.stringify(msg));
      return waitFor(() => conn.frames.find((f) => f.kind === 'command_result' && f.id === cmdId), { timeoutMs, what: `result of ${name}` });
    },
    dropAll(code = 1001, reason = 'going away') {
      for (const c of connections) if (!c.closed) c.socket.close(code, reason);
    },
    async close() {
      for (const c of connections) if (!c.closed) c.socket.terminate();
      await new Promise((resolve) => wss.close(resolve));
    },
  };
}

/** A free loopback port with nothing listening on it (for "daemon is down" tests). */
export async function freePort() {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/**
 * A command context over a jsdom page, the same shape core.js builds, with real (Node) timers
 * and short settle bounds.
 */
export async function pageContext(bodyHtml, { url } = {}) {
  const { createRefRegistry } = await import('../src/dom/refs.js');
  const { createCandidateCache } = await import('../src/dom/candidates.js');
  const { openTabStore } = await import('../src/storage.js');
  const { createStoreRegistry } = await import('../src/commands/state.js');
  const { createPageClock } = await import('../src/commands/clock.js');
  const { captureClock } = await import('../src/natives.js');
  const win = makePage(`<!doctype html><html><head><title>Fixture</title></head><body>${bodyHtml}</body></html>`, url ? { url } : undefined);
  const store = openTabStore(win);
  return {
    win,
    doc: win.document,
    refs: createRefRegistry({ store }),
    candidates: createCandidateCache(win.document),
    tabStore: store,
    clock: captureClock(globalThis),
    stores: createStoreRegistry(),
    signals: new Set(),
    flows: [],
    settle: { quietMs: 0, maxMs: 50 },
    pageClock: createPageClock(win),
    presenter: null,
    pendingRequests: () => 0,
  };
}
