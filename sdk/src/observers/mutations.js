// observers/mutations.js — DOM change activity, summarised per time window.
//
// Owns: one MutationObserver on the document; every MUTATION_WINDOW_MS with activity it emits at
// most one event per kind — `dom.added`, `dom.removed`, `dom.attr`, `dom.text` — carrying the
// window's `count`, up to DOM_SAMPLES_PER_WINDOW `samples`, and the first sample's fields at the
// top level (`role`, `name` / `attr`, `value` / `text`) with its `ref` on the event.
// Must not: report the SDK's own UI, or emit one event per node (a busy page would flood the
// bridge); counts carry the volume.

import { DOM_SAMPLES_PER_WINDOW, EventType, MUTATION_WINDOW_MS, ObserverLimits, OWN_UI_ATTR } from '../protocol.js';
import { isSensitiveKey } from '../serialize.js';
import { isPasswordField, nameOf, roleOf } from '../dom/roles.js';

const TEXT_LIMIT = ObserverLimits.DOM_SAMPLE_TEXT_CHARS;

function blankWindow() {
  return {
    started: null,
    added: { count: 0, samples: [] },
    removed: { count: 0, samples: [] },
    attr: { count: 0, samples: [] },
    text: { count: 0, samples: [] },
  };
}

const OWN_UI_SELECTOR = `[${OWN_UI_ATTR}]`;

/** Whether `node` is in the SDK's own UI; `seen` remembers each element's answer for one batch of
 *  records (a storm's records share a few targets, and `closest` walks to the root each time). */
function isOwn(node, seen) {
  const el = node && (node.nodeType === 1 ? node : node.parentElement);
  if (!el || !el.closest) return false;
  let own = seen.get(el);
  if (own === undefined) {
    own = el.closest(OWN_UI_SELECTOR) !== null;
    seen.set(el, own);
  }
  return own;
}

export function observeMutations({ win, emit, refs, clock, windowMs = MUTATION_WINDOW_MS }) {
  const doc = win.document;
  const Observer = win.MutationObserver;
  if (!Observer) return { stop() {}, flush() {} };
  let current = blankWindow();
  let timer = null;

  function sample(bucket, make) {
    bucket.count += 1;
    if (bucket.samples.length < DOM_SAMPLES_PER_WINDOW) {
      try {
        const s = make();
        if (s) bucket.samples.push(s);
      } catch {
        // a sample is a nicety; the count is what matters
      }
    }
  }

  function record(m, seen) {
    if (isOwn(m.target, seen)) return;
    if (m.type === 'childList') {
      for (const node of m.addedNodes) {
        if (node.nodeType === 1) {
          if (node.hasAttribute(OWN_UI_ATTR)) continue;
          sample(current.added, () => ({ ref: refs.refFor(node), role: roleOf(node), name: nameOf(node) }));
        } else if (node.nodeType === 3 && node.nodeValue.trim()) {
          sample(current.text, () => textSample(m.target));
        }
      }
      for (const node of m.removedNodes) {
        if (node.nodeType === 1) {
          if (node.hasAttribute && node.hasAttribute(OWN_UI_ATTR)) continue;
          sample(current.removed, () => {
            const s = { role: roleOf(node), name: nameOf(node), tag: node.tagName.toLowerCase() };
            const ref = refs.peek(node);
            if (ref) s.ref = ref;
            return s;
          });
        }
      }
    } else if (m.type === 'attributes') {
      sample(current.attr, () => {
        const el = m.target;
        let value = el.getAttribute(m.attributeName);
        if (isSensitiveKey(m.attributeName) || (m.attributeName === 'value' && isPasswordField(el))) value = '[REDACTED]';
        return { ref: refs.refFor(el), attr: m.attributeName, value: value === null ? null : value.slice(0, TEXT_LIMIT) };
      });
    } else if (m.type === 'characterData') {
      sample(current.text, () => textSample(m.target.parentElement));
    }
  }

  function textSample(el) {
    if (!el || el.nodeType !== 1) return null;
    return { ref: refs.refFor(el), text: (el.textContent || '').replace(/\s+/g, ' ').trim().slice(0, TEXT_LIMIT) };
  }

  function flush() {
    timer = null;
    const w = current;
    current = blankWindow();
    const windowLength = w.started === null ? 0 : Math.round(clock.now() - w.started);
    const kinds = [
      [EventType.DOM_ADDED, w.added],
      [EventType.DOM_REMOVED, w.removed],
      [EventType.DOM_ATTR, w.attr],
      [EventType.DOM_TEXT, w.text],
    ];
    for (const [type, bucket] of kinds) {
      if (bucket.count === 0) continue;
      const first = bucket.samples[0] || {};
      const { ref, ...fields } = first;
      emit(type, { ...fields, count: bucket.count, windowMs: windowLength, samples: bucket.samples }, ref);
    }
  }

  const observer = new Observer((records) => {
    const seen = new Map();
    const before = current.added.count + current.removed.count + current.attr.count + current.text.count;
    for (const m of records) {
      try {
        record(m, seen);
      } catch {
        // never break the page's DOM work
      }
    }
    const any = current.added.count + current.removed.count + current.attr.count + current.text.count > before;
    if (any && timer === null) {
      current.started = clock.now();
      timer = clock.setTimeout(flush, windowMs);
    }
  });
  observer.observe(doc, { subtree: true, childList: true, attributes: true, characterData: true });

  return {
    flush() {
      if (timer !== null) {
        clock.clearTimeout(timer);
        flush();
      }
    },
    stop() {
      try {
        const seen = new Map();
        for (const m of observer.takeRecords()) record(m, seen);
      } catch {
        // ignore
      }
      observer.disconnect();
      if (timer !== null) clock.clearTimeout(timer);
      timer = null;
    },
  };
}
