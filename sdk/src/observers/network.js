// observers/network.js — the app's HTTP traffic (fetch and XMLHttpRequest), as events.
//
// Owns: wrapping `fetch` and XHR `open`/`send`; emitting `net.pending {id, method, url,
// initiator}` when a request starts and `net.request {id, method, url, status, ok, durationMs,
// initiator, error?}` when it ends; `pending()` for act settling.
// Must not: read or alter bodies, change what the app's call returns or throws, or keep query
// values of sensitive parameters (URLs go through redactUrl).

import { EventType } from '../protocol.js';
import { redactUrl } from '../serialize.js';
import { readFetchBody, readXhrBody } from './bodies.js';

export function observeNetwork({ win, emit, clock, bodies }) {
  let counter = 0;
  let inFlight = 0;
  let active = true;
  const restores = [];

  function absolute(url) {
    try {
      return redactUrl(new URL(String(url), win.location.href).href);
    } catch {
      return redactUrl(String(url));
    }
  }

  function begin(method, url, initiator) {
    counter += 1;
    const id = `n${counter}`;
    inFlight += 1;
    const started = clock.now();
    if (active) emit(EventType.NET_PENDING, { id, method, url, initiator });
    let finished = false;
    return (outcome) => {
      if (finished) return;
      finished = true;
      inFlight = Math.max(0, inFlight - 1);
      if (!active) return;
      const data = {
        id,
        method,
        url,
        status: outcome.status,
        ok: outcome.ok,
        durationMs: Math.round(clock.now() - started),
        initiator,
      };
      if (outcome.error) data.error = outcome.error;
      if (outcome.captured) Object.assign(data, outcome.captured);
      emit(EventType.NET_REQUEST, data);
    };
  }

  if (typeof win.fetch === 'function') {
    const originalFetch = win.fetch;
    const wrappedFetch = function reticleFetch(input, init) {
      let finish = null;
      const capture = Boolean(bodies && bodies.wanted());
      try {
        const method = String((init && init.method) || (input && typeof input === 'object' && input.method) || 'GET').toUpperCase();
        const url = absolute(input && typeof input === 'object' && 'url' in input ? input.url : input);
        finish = begin(method, url, 'fetch');
      } catch {
        finish = null;
      }
      let promise;
      try {
        promise = originalFetch.call(this, input, init);
      } catch (err) {
        if (finish) finish({ status: 0, ok: false, error: err && err.message ? err.message : String(err) });
        throw err;
      }
      if (!finish || !promise || typeof promise.then !== 'function') return promise;
      promise.then(
        (res) => {
          const outcome = { status: res && typeof res.status === 'number' ? res.status : 0, ok: Boolean(res && res.ok) };
          if (!capture || !res || typeof res.clone !== 'function') return finish(outcome);
          return readFetchBody(res, clock).then((captured) => finish({ ...outcome, captured }));
        },
        (err) => finish({ status: 0, ok: false, error: err && err.name === 'AbortError' ? 'aborted' : err && err.message ? err.message : String(err) }),
      );
      return promise;
    };
    win.fetch = wrappedFetch;
    restores.push(() => {
      if (win.fetch === wrappedFetch) win.fetch = originalFetch;
    });
  }

  const XHR = win.XMLHttpRequest;
  if (XHR && XHR.prototype) {
    const proto = XHR.prototype;
    const originalOpen = proto.open;
    const originalSend = proto.send;
    const requests = new WeakMap();
    const wrappedOpen = function reticleOpen(method, url, ...rest) {
      try {
        requests.set(this, { method: String(method || 'GET').toUpperCase(), url: absolute(url) });
      } catch {
        // keep the call going
      }
      return originalOpen.call(this, method, url, ...rest);
    };
    const wrappedSend = function reticleSend(body) {
      const info = requests.get(this);
      let finish = null;
      if (info) {
        try {
          finish = begin(info.method, info.url, 'xhr');
          const capture = Boolean(bodies && bodies.wanted());
          let error = null;
          const xhr = this;
          const done = finish;
          xhr.addEventListener('error', () => {
            error = 'network error';
          });
          xhr.addEventListener('abort', () => {
            error = 'aborted';
          });
          xhr.addEventListener('timeout', () => {
            error = 'timeout';
          });
          xhr.addEventListener('loadend', () => {
            const status = xhr.status || 0;
            const captured = capture && status !== 0 ? readXhrBody(xhr) : null;
            done({ status, ok: status >= 200 && status < 300, error: error || (status === 0 ? 'network error' : undefined), captured });
          });
        } catch {
          // keep the call going
        }
      }
      try {
        return originalSend.call(this, body);
      } catch (err) {
        if (finish) finish({ status: 0, ok: false, error: err && err.message ? err.message : String(err) });
        throw err;
      }
    };
    proto.open = wrappedOpen;
    proto.send = wrappedSend;
    restores.push(() => {
      if (proto.open === wrappedOpen) proto.open = originalOpen;
      if (proto.send === wrappedSend) proto.send = originalSend;
    });
  }

  return {
    pending: () => inFlight,
    stop() {
      active = false;
      for (const restore of restores) restore();
    },
  };
}
