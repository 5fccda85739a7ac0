// transport.js — one WebSocket to the daemon, kept alive for the life of the page.
//
// Owns: opening the socket, sending `hello` first on every open, the gap marker, replaying the
// offline queue, reconnecting with capped jittered backoff (forever; a 1008 refusal included),
// and the SDK's few connection warnings (cannot reach, lost, back, refused). A 1008 refusal whose
// reason says the session is in use is handed to `onSessionInUse` (the caller takes a new id) and
// retried soon, not at the cap. `suspend()` lets go of the socket while the document sits in the
// back/forward cache (the tab has moved on: its newer document owns the session) and `resume()`
// takes it up again when the document is shown anew.
// Must not: interpret commands (it hands raw frames to `onFrame`), build event envelopes (the
// caller encodes them), or call the page's possibly-frozen timers (it uses the injected clock).
//
// "Established" means the socket is open AND either a frame arrived from the daemon or it has
// stayed open for `establishedAfterMs`. A daemon that accepts the upgrade and then refuses the
// hello (1008) or is full (1013) never establishes, so it neither resets the backoff nor prints
// "lost"/"back" warnings every cycle; and what was sent on such a socket is queued again.

import { createBackoff } from './backoff.js';
import { addToGap, mergeGaps } from './outbox.js';
import { CloseCode, CloseReasonSent, CloseReasonStart, Transport } from './protocol.js';

export const TransportState = Object.freeze({
  IDLE: 'idle',
  CONNECTING: 'connecting',
  OPEN: 'open',
  WAITING: 'waiting',
  /** Let go while the document is in the back/forward cache; `resume()` reconnects. */
  SUSPENDED: 'suspended',
  STOPPED: 'stopped',
});

const OPEN_READY_STATE = 1;

/**
 * @param {object} o
 * @param {string} o.url
 * @param {Function} o.WebSocketImpl
 * @param {import('./natives.js').SdkClock} o.clock
 * @param {ReturnType<typeof import('./log.js').createSdkLog>} o.log
 * @param {ReturnType<typeof import('./outbox.js').createOutbox>} o.outbox
 * @param {() => object} o.buildHello              fresh hello for each open
 * @param {(gap: object) => string | null} o.encodeGapMarker
 * @param {(data: unknown) => void} o.onFrame      every frame the daemon sends
 * @param {(state: string) => void} [o.onState]
 * @param {() => boolean} [o.onSessionInUse]   another page carries the session id: take a new
 *                                             one for the next hello; true when taken
 * @param {() => number} [o.random]
 */
export function createTransport({
  url,
  WebSocketImpl,
  clock,
  log,
  outbox,
  buildHello,
  encodeGapMarker,
  onFrame,
  onState = () => {},
  onSessionInUse = () => false,
  random = Math.random,
  backoff = createBackoff({ random }),
  establishedAfterMs = Transport.ESTABLISHED_AFTER_MS,
  unreachableWarnAfter = Transport.UNREACHABLE_WARN_AFTER,
}) {
  let state = TransportState.IDLE;
  let socket = null;
  let socketEstablished = false;
  let everEstablished = false;
  let retryTimer = null;
  let establishTimer = null;
  let failedBeforeFirst = 0;
  let lostWarned = false;
  let refusedWarned = false;
  /**
   * Events sent on the current socket before it was established: re-queued if it fails. At most
   * a queue's worth is kept; older ones are only counted (`unconfirmedGap`), as the queue would.
   */
  let unconfirmed = [];
  let unconfirmedGap = null;

  function holdUnconfirmed(entry) {
    unconfirmed.push(entry);
    if (unconfirmed.length > outbox.limit) unconfirmedGap = addToGap(unconfirmedGap, unconfirmed.shift());
  }
  const stats = { opens: 0, closes: 0, lastCloseCode: null, lastCloseReason: '', lastDelayMs: null, refusals: 0, sessionConflicts: 0 };

  function setState(next) {
    if (state === next) return;
    state = next;
    try {
      onState(next);
    } catch {
      // a presenter error must not break the transport
    }
  }

  function open() {
    if (state === TransportState.STOPPED || state === TransportState.SUSPENDED) return;
    retryTimer = null;
    setState(TransportState.CONNECTING);
    let ws;
    try {
      ws = new WebSocketImpl(url);
    } catch (err) {
      // e.g. mixed content or a malformed URL: a failed attempt like any other
      socket = null;
      afterClose(0, err && err.message ? err.message : 'WebSocket constructor threw', false);
      return;
    }
    socket = ws;
    socketEstablished = false;
    ws.onopen = () => {
      if (socket !== ws) return;
      handleOpen(ws);
    };
    ws.onmessage = (ev) => {
      if (socket !== ws) return;
      markEstablished();
      onFrame(ev.data);
    };
    ws.onerror = () => {
      // a close event always follows; it carries the code
    };
    ws.onclose = (ev) => {
      if (socket !== ws) return;
      socket = null;
      afterClose(ev && typeof ev.code === 'number' ? ev.code : 0, ev && ev.reason ? String(ev.reason) : '', true);
    };
  }

  function rawSend(text) {
    if (!socket || state !== TransportState.OPEN || socket.readyState !== OPEN_READY_STATE) return false;
    try {
      socket.send(text);
      return true;
    } catch {
      return false;
    }
  }

  function handleOpen(ws) {
    stats.opens += 1;
    setState(TransportState.OPEN);
    let hello;
    try {
      hello = JSON.stringify(buildHello());
    } catch (err) {
      log.warn(`could not build the hello message (${err && err.message}); closing and retrying`);
      ws.close();
      return;
    }
    rawSend(hello);
    unconfirmed = [];
    unconfirmedGap = null;
    const gap = outbox.takeGap();
    if (gap) {
      const marker = encodeGapMarker(gap);
      if (marker && rawSend(marker)) unconfirmedGap = mergeGaps(unconfirmedGap, gap);
      else outbox.restore([], gap);
    }
    for (const entry of outbox.drain()) {
      if (rawSend(entry.text)) holdUnconfirmed(entry);
      else outbox.push(entry);
    }
    clock.clearTimeout(establishTimer);
    establishTimer = clock.setTimeout(() => {
      establishTimer = null;
      if (socket === ws && state === TransportState.OPEN) markEstablished();
    }, establishedAfterMs);
  }

  function markEstablished() {
    if (socketEstablished) return;
    socketEstablished = true;
    clock.clearTimeout(establishTimer);
    establishTimer = null;
    unconfirmed = [];
    unconfirmedGap = null;
    backoff.reset();
    failedBeforeFirst = 0;
    refusedWarned = false;
    if (lostWarned) {
      lostWarned = false;
      log.warn(`connection to the Reticle daemon at ${url} is back; queued events were replayed`);
    }
    everEstablished = true;
  }

  function afterClose(code, reason, wasSocket) {
    clock.clearTimeout(establishTimer);
    establishTimer = null;
    const wasEstablished = socketEstablished;
    socketEstablished = false;
    if (wasSocket) {
      stats.closes += 1;
      stats.lastCloseCode = code;
      stats.lastCloseReason = reason;
    }
    if (!wasEstablished && (unconfirmed.length || unconfirmedGap)) {
      outbox.restore(unconfirmed, unconfirmedGap);
    }
    unconfirmed = [];
    unconfirmedGap = null;
    if (state === TransportState.STOPPED || state === TransportState.SUSPENDED) return;

    if (wasEstablished && !lostWarned) {
      lostWarned = true;
      log.warn(
        `lost the connection to the Reticle daemon at ${url} (close ${code}${reason ? `: ${reason}` : ''}); ` +
          `events are queued (up to ${outbox.limit}) and reconnection continues in the background`,
      );
    }
    if (code === CloseCode.POLICY && reason.startsWith(CloseReasonStart.SESSION_IN_USE) && takeNewSession()) {
      stats.sessionConflicts += 1;
      backoff.reset();
    } else if (code === CloseCode.POLICY) {
      stats.refusals += 1;
      backoff.toCap();
      if (!refusedWarned) {
        refusedWarned = true;
        log.warn(
          `the Reticle daemon at ${url} refused this page (close 1008${reason ? `: ${reason}` : ''}); ` +
            `retrying every ${Math.round(backoff.capMs / 1000)} s or so in case it is restarted or upgraded`,
        );
      }
    } else if (!everEstablished) {
      failedBeforeFirst += 1;
      if (failedBeforeFirst === unreachableWarnAfter) {
        log.warn(`cannot reach the Reticle daemon at ${url} after ${failedBeforeFirst} attempts; still retrying with backoff`);
      }
    }
    scheduleRetry();
  }

  function takeNewSession() {
    try {
      return onSessionInUse() === true;
    } catch {
      return false;
    }
  }

  function scheduleRetry() {
    const delay = backoff.next();
    stats.lastDelayMs = delay;
    setState(TransportState.WAITING);
    retryTimer = clock.setTimeout(open, delay);
  }

  /** Ends the current socket (if any) with a normal close and cancels every timer. */
  function letGo(next, reason) {
    setState(next);
    clock.clearTimeout(retryTimer);
    clock.clearTimeout(establishTimer);
    retryTimer = null;
    establishTimer = null;
    const ws = socket;
    socket = null;
    if (ws) {
      try {
        ws.close(CloseCode.NORMAL, reason);
      } catch {
        // already closing
      }
    }
    if (!socketEstablished && (unconfirmed.length || unconfirmedGap)) outbox.restore(unconfirmed, unconfirmedGap);
    socketEstablished = false;
    unconfirmed = [];
    unconfirmedGap = null;
  }

  return {
    start() {
      if (state !== TransportState.IDLE) return;
      open();
    },
    stop() {
      if (state === TransportState.STOPPED) return;
      letGo(TransportState.STOPPED, CloseReasonSent.DISCONNECT);
    },
    /**
     * The document went into the back/forward cache: close the socket, so the daemon hands the
     * session to the tab's next document, and make no attempt until `resume()`.
     */
    suspend() {
      if (state === TransportState.STOPPED || state === TransportState.SUSPENDED || state === TransportState.IDLE) return;
      letGo(TransportState.SUSPENDED, CloseReasonSent.PAGE_HIDDEN);
    },
    /** The document was shown again from the back/forward cache: connect now. */
    resume() {
      if (state !== TransportState.SUSPENDED) return;
      setState(TransportState.WAITING);
      backoff.reset();
      open();
    },
    /** Sends an encoded event now, or queues it for the next connection. */
    sendEvent(entry) {
      if (state !== TransportState.STOPPED && rawSend(entry.text)) {
        if (!socketEstablished) holdUnconfirmed(entry);
        return true;
      }
      outbox.push(entry);
      return false;
    },
    /** Sends an encoded command result now; false when there is no open socket to carry it. */
    sendResult(text) {
      return rawSend(text);
    },
    get state() {
      return state;
    },
    get established() {
      return socketEstablished;
    },
    get stats() {
      return { ...stats, queued: outbox.size, attempt: backoff.attempt };
    },
  };
}
