// core.js — one Reticle SDK instance bound to one window: connect, observe, answer commands.
//
// Owns: `createReticle({win, ...})` and its lifecycle: validating `connect()` options, resolving
// the session id (and taking a new one when the daemon says another page carries it), building
// `hello`, encoding events (time, sequence, wire-safe data), starting and
// stopping observers and the transport (which lets go while the document sits in the
// back/forward cache, lifecycle.js), and the handler context for commands, including the
// person's recorder (recorder.js), which every emitted event passes on its way out.
// Must not: throw to the page. Every public method returns a value; bad input gets
// `{ok:false, reason}`.

import { createBackoff } from './backoff.js';
import { COMMAND_HANDLERS } from './commands/index.js';
import { createPageClock } from './commands/clock.js';
import { createStoreRegistry } from './commands/state.js';
import { createDispatcher } from './dispatch.js';
import { followHistoryCache } from './lifecycle.js';
import { createCandidateCache } from './dom/candidates.js';
import { createRefRegistry } from './dom/refs.js';
import { createSdkLog } from './log.js';
import { captureClock } from './natives.js';
import { createBodyCapture } from './observers/bodies.js';
import { observeConsole } from './observers/console.js';
import { observeHealth } from './observers/health.js';
import { observeMutations } from './observers/mutations.js';
import { observeNetwork } from './observers/network.js';
import { observeRoute } from './observers/route.js';
import { createOutbox } from './outbox.js';
import { createPresenter } from './presenter.js';
import { createRecorder } from './recorder.js';
import {
  DEFAULT_PORT,
  EventType,
  Limits,
  LOOPBACK_HOSTS,
  MessageKind,
  ObserverLimits,
  PROTOCOL_VERSION,
  SDK_VERSION,
  Transport,
  WIRE_CONTRACT,
  WS_PATH,
} from './protocol.js';
import { clip, encodeFrame, redactUrl, toWireValue } from './serialize.js';
import { newSessionId, openTabStore, resolveSessionId } from './storage.js';
import { createTransport, TransportState } from './transport.js';

/** Builds and checks the daemon URL from `connect()` options. */
export function bridgeUrlFrom(options) {
  if (options.url !== undefined) {
    if (typeof options.url !== 'string') return { ok: false, reason: 'url must be a string like ws://127.0.0.1:4400/reticle' };
    let parsed;
    try {
      parsed = new URL(options.url);
    } catch {
      return { ok: false, reason: `url '${options.url.slice(0, 200)}' is not a valid URL` };
    }
    if (parsed.protocol !== 'ws:' && parsed.protocol !== 'wss:') return { ok: false, reason: `url must use ws: or wss: (got ${parsed.protocol})` };
    if (!LOOPBACK_HOSTS.includes(parsed.hostname)) {
      return { ok: false, reason: `Reticle is localhost-only: the daemon URL must point at a loopback host (got ${parsed.hostname})` };
    }
    return { ok: true, url: parsed.href };
  }
  const port = options.port === undefined || options.port === null || options.port === '' ? DEFAULT_PORT : Number(options.port);
  if (!Number.isInteger(port) || port < 1 || port > 65535) return { ok: false, reason: `port must be an integer from 1 to 65535 (got ${String(options.port).slice(0, 40)})` };
  return { ok: true, url: `ws://127.0.0.1:${port}${WS_PATH}` };
}

/**
 * @param {object} o
 * @param {any} o.win                        the page's window (jsdom's in tests)
 * @param {Function} [o.WebSocketImpl]      defaults to win.WebSocket
 * @param {object} [o.clock]                defaults to the window's native clock (natives.js)
 * @param {() => number} [o.random]
 * @param {{quietMs: number, maxMs: number}} [o.settle]  act settling bounds
 * @param {object} [o.consoleSink]          where the SDK writes its warnings (win.console)
 */
export function createReticle({ win = globalThis, WebSocketImpl, clock, random = Math.random, settle, consoleSink, backoff } = {}) {
  const sdkClock = clock || captureClock(win);
  const bodyCapture = createBodyCapture(sdkClock);
  const origin = sdkClock.now();
  const log = createSdkLog(consoleSink || win.console);
  const stores = createStoreRegistry();
  const signals = new Set();
  const flows = [];
  const outbox = createOutbox({ limit: Transport.QUEUE_LIMIT });
  let seq = 0;
  let tabStore = null;
  let refs = null;
  let candidates = null;
  let pageClock = null;
  let session = null; // {sessionId, url, token, projectId, source}
  let transport = null;
  let stops = [];
  let network = null;
  let mutations = null;
  let presenter = null;
  const recorder = createRecorder({ win, context: () => (session ? commandContext() : null), emit: (type, data) => emit(type, data) });

  function nowT() {
    return Math.max(0, Math.round(sdkClock.now() - origin));
  }

  function encodeEvent(entry) {
    const event = { t: entry.t, type: entry.type, sessionId: session.sessionId };
    if (entry.ref) event.ref = entry.ref;
    event.data = entry.data;
    event.seq = entry.seq;
    let text = encodeFrame({ kind: MessageKind.EVENT, event });
    if (!text) {
      event.data = { truncated: true, reason: 'event data exceeded the frame limit' };
      text = encodeFrame({ kind: MessageKind.EVENT, event });
    }
    return text;
  }

  /** Records one event: sent now, queued while offline, or held until connect(). */
  function emit(type, data, ref) {
    if (recorder.active) recorder.noteEvent(type, data);
    try {
      const entry = { type, t: nowT(), seq: seq++, data: toWireValue(data ?? {}), text: null };
      if (typeof ref === 'string' && ref.length <= Limits.MAX_REF) entry.ref = ref;
      if (!session) {
        outbox.push(entry);
        return;
      }
      entry.text = encodeEvent(entry);
      if (!entry.text) return;
      transport.sendEvent(entry);
    } catch {
      // an event that cannot be recorded must not break the page
    }
  }

  function buildHello() {
    let href = '';
    let title = '';
    try {
      href = win.location.href;
      title = win.document.title || '';
    } catch {
      // keep empty
    }
    const hello = {
      kind: MessageKind.HELLO,
      protocolVersion: PROTOCOL_VERSION,
      sessionId: session.sessionId,
    };
    if (session.projectId) hello.projectId = session.projectId;
    hello.url = clip(redactUrl(href), Limits.MAX_URL);
    hello.title = clip(title, Limits.MAX_TITLE);
    hello.adapters = [];
    if (session.token !== undefined) hello.token = session.token;
    hello.hasCapabilities = stores.size > 0;
    hello.sdkVersion = SDK_VERSION;
    hello.contract = WIRE_CONTRACT;
    return hello;
  }

  function encodeGapMarker(gap) {
    return encodeFrame({
      kind: MessageKind.EVENT,
      event: {
        t: gap.firstDropT,
        type: EventType.TRANSPORT_OVERFLOW,
        sessionId: session.sessionId,
        data: {
          dropped: gap.dropped,
          firstDropT: gap.firstDropT,
          firstDropSeq: gap.firstDropSeq,
          lastDropSeq: gap.lastDropSeq,
          sentT: nowT(),
        },
      },
    });
  }

  function commandContext() {
    return {
      win,
      doc: win.document,
      refs,
      candidates,
      clock: sdkClock,
      stores,
      signals,
      flows,
      settle,
      pageClock,
      presenter,
      pendingRequests: () => (network ? network.pending() : 0),
      netBodies: bodyCapture,
      recorder,
    };
  }

  function status() {
    return {
      connected: Boolean(transport && transport.state === TransportState.OPEN),
      state: transport ? transport.state : TransportState.IDLE,
      sessionId: session ? session.sessionId : null,
      url: session ? session.url : null,
      storage: tabStore ? (tabStore.persistent ? 'sessionStorage' : 'memory') : null,
      queued: outbox.size,
      transport: transport ? transport.stats : null,
    };
  }

  function connect(options = {}) {
    try {
      if (options === null || typeof options !== 'object') return { ok: false, reason: 'connect() takes an options object' };
      if (session) return { ok: true, alreadyConnected: true, sessionId: session.sessionId, url: session.url };
      if (!win || !win.document) return { ok: false, reason: 'no window/document here; the SDK runs in a browser page' };
      const Socket = WebSocketImpl || win.WebSocket;
      if (typeof Socket !== 'function') return { ok: false, reason: 'this environment has no WebSocket' };
      const target = bridgeUrlFrom(options);
      if (!target.ok) return refuseConnect(target.reason);
      if (options.token !== undefined && options.token !== null && (typeof options.token !== 'string' || options.token.length > Limits.MAX_TOKEN)) {
        return refuseConnect(`token must be a string of at most ${Limits.MAX_TOKEN} characters`);
      }
      if (options.projectId !== undefined && (typeof options.projectId !== 'string' || options.projectId.length < 1 || options.projectId.length > 128)) {
        return refuseConnect('projectId must be a string of 1..128 characters');
      }
      tabStore = tabStore || openTabStore(win);
      const resolved = resolveSessionId({ explicit: options.session, win, store: tabStore });
      if (!resolved.ok) return refuseConnect(resolved.reason);
      refs = refs || createRefRegistry({ store: tabStore, wallNow: sdkClock.wallNow || (() => Date.now()) });
      pageClock = pageClock || createPageClock(win);
      candidates = createCandidateCache(win.document);
      session = {
        sessionId: resolved.sessionId,
        source: resolved.source,
        url: target.url,
        token: options.token === null || options.token === '' ? undefined : options.token,
        projectId: options.projectId,
      };
      // events recorded before connect() get their envelope now, in order
      for (const entry of outbox.drain()) {
        entry.text = encodeEvent(entry);
        if (entry.text) outbox.push(entry);
      }
      if (options.present !== false) {
        presenter = createPresenter(win);
        try {
          presenter.mount();
        } catch {
          presenter = null;
        }
      }
      const dispatcher = createDispatcher({
        handlers: COMMAND_HANDLERS,
        context: commandContext,
        sessionId: () => session && session.sessionId,
        reply: (text) => {
          if (text && transport) transport.sendResult(text);
        },
        afterReply: (fn) =>
          sdkClock.setTimeout(() => {
            try {
              fn();
            } catch (err) {
              log.warn(`could not complete a navigation: ${err && err.message}`);
            }
          }, 0),
      });
      transport = createTransport({
        url: target.url,
        WebSocketImpl: Socket,
        clock: sdkClock,
        log,
        outbox,
        random,
        backoff: backoff || createBackoff({ random }),
        buildHello,
        encodeGapMarker,
        onFrame: (data) => {
          dispatcher(data).catch(() => {});
        },
        onState: (state) => presenter && presenter.setConnection(state),
        onSessionInUse: takeOwnSession,
      });
      startObservers();
      stops.push(followHistoryCache({ win, transport }));
      transport.start();
      if (!tabStore.persistent) log.once('storage', `${tabStore.failure}; this page's session id lives in memory only (a reload starts a new session)`);
      return { ok: true, sessionId: session.sessionId, sessionSource: session.source, url: target.url, storage: tabStore.persistent ? 'sessionStorage' : 'memory' };
    } catch (err) {
      return refuseConnect(`connect failed: ${err && err.message ? err.message : String(err)}`);
    }
  }

  /**
   * The daemon refused this page's session id: another open page (a same-origin iframe or a popup
   * sharing this tab's sessionStorage, a duplicated tab) carries it. This page takes an id of its
   * own, for as long as it lives (not written to sessionStorage, which the other page may share),
   * and events still queued are put in envelopes naming it.
   */
  function takeOwnSession() {
    const previous = session.sessionId;
    session.sessionId = newSessionId(win.crypto || globalThis.crypto);
    session.source = 'conflict';
    for (const entry of outbox.drain()) {
      entry.text = encodeEvent(entry);
      if (entry.text) outbox.push(entry);
    }
    log.warn(
      `session ${previous} is in use by another open page (a same-origin iframe, a duplicated tab or a popup); ` +
        `this page connects as ${session.sessionId}`,
    );
    return true;
  }

  function refuseConnect(reason) {
    log.warn(`not connecting: ${reason}`);
    return { ok: false, reason };
  }

  function startObservers() {
    const safe = (start) => {
      try {
        return start();
      } catch (err) {
        log.warn(`an observer could not start: ${err && err.message}`);
        return null;
      }
    };
    const base = { win, emit, clock: sdkClock, refs, bodies: bodyCapture };
    stops = [];
    const consoleStop = safe(() => observeConsole(base));
    if (consoleStop) stops.push(consoleStop);
    network = safe(() => observeNetwork(base));
    if (network) stops.push(() => network.stop());
    const routeStop = safe(() => observeRoute(base));
    if (routeStop) stops.push(routeStop);
    mutations = safe(() => observeMutations(base));
    if (mutations) stops.push(() => mutations.stop());
    const healthStop = safe(() => observeHealth(base));
    if (healthStop) stops.push(healthStop);
  }

  function disconnect() {
    try {
      if (!session) return { ok: true, wasConnected: false };
      for (const stop of stops.splice(0)) {
        try {
          stop();
        } catch {
          // keep stopping the rest
        }
      }
      network = null;
      mutations = null;
      candidates.stop();
      candidates = null;
      if (transport) transport.stop();
      transport = null;
      if (presenter) presenter.unmount();
      presenter = null;
      if (pageClock && pageClock.frozen) pageClock.reset();
      if (recorder.active) recorder.stop();
      session = null;
      return { ok: true, wasConnected: true };
    } catch (err) {
      return { ok: false, reason: `disconnect failed: ${err && err.message}` };
    }
  }

  function signal(name, data) {
    if (typeof name !== 'string' || name.length === 0 || name.length > Limits.MAX_SIGNAL_NAME) {
      return { ok: false, reason: `signal name must be a string of 1..${Limits.MAX_SIGNAL_NAME} characters` };
    }
    if (signals.size < ObserverLimits.SIGNAL_NAMES_KEPT) signals.add(name);
    emit(EventType.SIGNAL, { name, data: data === undefined ? null : data });
    return { ok: true };
  }

  function registerStore(name, getState) {
    const out = stores.register(name, getState);
    if (!out.ok) return out;
    return { ok: true, unregister: out.unregister };
  }

  return {
    connect,
    disconnect,
    signal,
    registerStore,
    status,
    /** Test hook: flush the pending DOM mutation window now. */
    flushMutations: () => mutations && mutations.flush(),
    get refs() {
      return refs;
    },
  };
}
