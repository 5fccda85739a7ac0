// recorder.js — a person's recording: their clicks and typing in the page, on a daemon's request.
//
// Owns: `createRecorder({ win, context, emit })` → `{start(id), stop(), noteEvent(type, data),
// active}`. While recording, capture-phase listeners on the document turn what the person does
// into flow steps: a click → `click` (a click into a text field only focuses it, and checkboxes,
// radios and selects are taken from their `change`); typing in a text field → one `fill` with
// the field's final value (written when the person moves on, and at stop); a checkbox or radio →
// `check`/`uncheck`; a select → `select {value}`; Enter in a text field → `press {key:"Enter"}`.
// Each step names its element as a user would (dom/locator.js); an element with no such name is
// kept without a target, so the daemon reports it instead of guessing. A value typed into a
// password field never leaves the page: the step says `sensitive` and carries no value. The last
// signal the app sends after a step, before the next, becomes that step's `until` (the
// consequence the person saw). `stop()` emits one `flow.recorded` event `{name, id, flow:
// {version, name, startPath, steps}}` and returns its summary. Starting again restarts (what was
// held is discarded, nothing is sent). A recording lives as long as the document: a reload ends it.
// Must not: record events a script dispatched (only `isTrusted` ones are a person's: the SDK's own
// acts and a page's synthetic events are not), record the SDK's own UI, or act on the page.

import { EventType, OWN_UI_ATTR } from './protocol.js';
import { locatorFor } from './dom/locator.js';
import { isOwnUi, isPasswordField } from './dom/roles.js';

export const RECORDED_FLOW_VERSION = 1;
/** The most steps one recording keeps (a flow's own limit). */
export const MAX_RECORDED_STEPS = 200;
const DEFAULT_NAME = 'recorded-flow';
const TEXT_TYPES = new Set(['', 'text', 'email', 'tel', 'url', 'search', 'password', 'number']);
const CLICKABLE = 'button, a, summary, label, [role], input, select, textarea';
const SECRET_AUTOCOMPLETE = /(^|\s)(current-password|new-password|one-time-code)(\s|$)/;

function isTextField(el) {
  if (el.tagName === 'TEXTAREA') return true;
  return el.tagName === 'INPUT' && TEXT_TYPES.has((el.getAttribute('type') || '').toLowerCase());
}

function isChoice(el) {
  if (el.tagName === 'SELECT') return true;
  const type = (el.getAttribute('type') || '').toLowerCase();
  return el.tagName === 'INPUT' && (type === 'checkbox' || type === 'radio');
}

function isSensitive(el) {
  return isPasswordField(el) || SECRET_AUTOCOMPLETE.test(el.getAttribute('autocomplete') || '');
}

/**
 * @param {object} o
 * @param {any} o.win
 * @param {() => object|null} o.context   the command context (refs, candidates...) while connected
 * @param {(type: string, data: object) => void} o.emit
 * @param {(e: Event) => boolean} [o.isPerson]  whether an event is a person's (tests stand in)
 */
export function createRecorder({ win, context, emit, isPerson = (e) => e.isTrusted === true }) {
  let recording = null; // {id, name, startPath, steps, pending, listeners}

  function ownUi(el) {
    return !el || el.hasAttribute?.(OWN_UI_ATTR) || isOwnUi(el);
  }

  function stepFor(el, action, args) {
    const ctx = context();
    const target = ctx ? locatorFor(ctx, el) : null;
    const step = { action };
    if (target) step.target = target;
    if (args) step.args = args;
    return step;
  }

  function push(step) {
    if (recording.steps.length < MAX_RECORDED_STEPS) recording.steps.push(step);
    else recording.dropped += 1;
  }

  function flush() {
    const pending = recording.pending;
    if (!pending) return;
    recording.pending = null;
    const step = pending.step;
    if (isSensitive(pending.el)) step.sensitive = true;
    else step.args = { value: pending.el.value };
    push(step);
  }

  const on = {
    click(e) {
      if (!isPerson(e)) return;
      const el = e.target && e.target.closest ? e.target.closest(CLICKABLE) || e.target : null;
      if (ownUi(el) || isTextField(el) || isChoice(el)) return;
      flush();
      push(stepFor(el, 'click'));
    },
    input(e) {
      if (!isPerson(e) || ownUi(e.target) || !isTextField(e.target)) return;
      if (recording.pending && recording.pending.el !== e.target) flush();
      // Named on the first keystroke: the field may be gone by the time the person moves on.
      if (!recording.pending) recording.pending = { el: e.target, step: stepFor(e.target, 'fill') };
    },
    change(e) {
      if (!isPerson(e) || ownUi(e.target) || !isChoice(e.target)) return;
      flush();
      const el = e.target;
      if (el.tagName === 'SELECT') push(stepFor(el, 'select', { value: el.value }));
      else push(stepFor(el, el.checked ? 'check' : 'uncheck'));
    },
    keydown(e) {
      if (!isPerson(e) || e.key !== 'Enter' || ownUi(e.target) || !isTextField(e.target) || e.target.tagName === 'TEXTAREA') return;
      flush();
      push(stepFor(e.target, 'press', { key: 'Enter' }));
    },
  };

  function start(id) {
    const restarted = recording !== null;
    if (restarted) for (const [type, listener] of Object.entries(on)) win.document.removeEventListener(type, listener, true);
    let startPath = '/';
    try {
      startPath = win.location.pathname || '/';
    } catch {
      // keep '/'
    }
    recording = { id: String(id ?? ''), name: DEFAULT_NAME, startPath, steps: [], pending: null, dropped: 0 };
    for (const [type, listener] of Object.entries(on)) win.document.addEventListener(type, listener, true);
    return { ok: true, result: { recording: true, id: recording.id, startPath, restarted } };
  }

  function stop() {
    if (!recording) return { ok: false, error: 'not recording; start with record {action:"start"}' };
    for (const [type, listener] of Object.entries(on)) win.document.removeEventListener(type, listener, true);
    flush();
    const done = recording;
    recording = null;
    const flow = { version: RECORDED_FLOW_VERSION, name: done.name, startPath: done.startPath, steps: done.steps };
    emit(EventType.FLOW_RECORDED, { name: done.name, id: done.id, flow });
    const result = { recording: false, id: done.id, stepCount: done.steps.length };
    if (done.dropped) result.dropped = done.dropped;
    return { ok: true, result };
  }

  /** Every event the SDK emits passes here: a signal after a step is that step's consequence. */
  function noteEvent(type, data) {
    if (!recording || type !== EventType.SIGNAL || !data || typeof data.name !== 'string') return;
    const last = recording.steps[recording.steps.length - 1];
    if (last) last.until = { kind: 'signal', name: data.name };
  }

  return {
    start,
    stop,
    noteEvent,
    get active() {
      return recording !== null;
    },
  };
}
