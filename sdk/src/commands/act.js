// commands/act.js — `act` and `act_sequence`: do one thing to one element, as a user would.
//
// Owns: validating an action, resolving its ref (a stale ref is a named refusal), the
// destructive-action guard (`args.confirmDangerous`), dispatching the DOM events for each action,
// waiting for the page to settle (quiet, or one task when the daemon asks `settle: 'task'`
// because it observes the consequence itself), and reporting the observed effect.
// Must not: fall back to another element when a ref is stale, act on a disabled control, or let
// an exception from a page handler escape (it becomes an `ok:false` result).

import { ActAction, ActSettle, ActSettleMode, CommandLimits } from '../protocol.js';
import { labelFor, isDisabled, isPasswordField, nameOf, testidOf, textOf, valueOf, hasLayout, isVisible } from '../dom/roles.js';
import { waitForTask, watchMutations, waitForQuiet } from '../dom/settle.js';

const ACTIONS = new Set(Object.values(ActAction));
const NEEDS_ENABLED = new Set([
  ActAction.CLICK, ActAction.DBLCLICK, ActAction.FILL, ActAction.TYPE, ActAction.CLEAR, ActAction.SELECT,
  ActAction.CHECK, ActAction.UNCHECK, ActAction.SUBMIT, ActAction.PRESS,
]);
const DANGER_WORDS = /(^|[^a-z])(delete|remove|destroy|drop|erase|purge|wipe|discard|revoke|terminate|deactivate|unsubscribe)(?![a-z])/;

class Refusal extends Error {}

function refuse(message) {
  throw new Refusal(message);
}

function dangerText(el, withContent = true) {
  const parts = [nameOf(el), testidOf(el) || '', el.getAttribute('aria-label') || '', el.id || '', withContent ? textOf(el, 120) : '', el.getAttribute('action') || ''];
  return parts
    .join(' ')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase();
}

function looksDestructive(el) {
  if (!el) return false;
  if (DANGER_WORDS.test(dangerText(el))) return true;
  // a submit button of a form that is itself about deleting
  const form = el.form || null;
  if (form && isSubmitButton(el) && DANGER_WORDS.test(dangerText(form, false))) {
    return true;
  }
  return false;
}

function isSubmitButton(el) {
  if (el.tagName === 'BUTTON') return (el.getAttribute('type') || 'submit').toLowerCase() === 'submit';
  if (el.tagName === 'INPUT') return ['submit', 'image'].includes((el.getAttribute('type') || '').toLowerCase());
  return false;
}

/** Why the action needs `confirmDangerous`, or null. */
function dangerOf(el, action, args) {
  if (action === ActAction.SUBMIT) return 'submitting a form';
  if ((action === ActAction.CLICK || action === ActAction.DBLCLICK) && looksDestructive(el)) return `clicking ${labelFor(el)}`;
  if (action === ActAction.PRESS && /^(Enter| |Space)$/.test(String(args.key)) && looksDestructive(el)) return `pressing ${args.key} on ${labelFor(el)}`;
  return null;
}

function eventInit(win, el, extra = {}) {
  let clientX = 0;
  let clientY = 0;
  try {
    const r = el.getBoundingClientRect();
    clientX = r.left + r.width / 2;
    clientY = r.top + r.height / 2;
  } catch {
    // no layout
  }
  return { bubbles: true, cancelable: true, composed: true, view: win, clientX, clientY, button: 0, ...extra };
}

function fire(win, el, Ctor, type, extra) {
  const init = eventInit(win, el, extra);
  const ev = new Ctor(type, init);
  el.dispatchEvent(ev);
  return ev;
}

function pointerCtor(win) {
  return win.PointerEvent || win.MouseEvent;
}

function pointerFire(win, el, type, extra = {}) {
  return fire(win, el, pointerCtor(win), type, { pointerId: 1, pointerType: 'mouse', isPrimary: true, ...extra });
}

function isFocusable(el) {
  if (isDisabled(el)) return false;
  if (el.getAttribute('tabindex') !== null) return true;
  if (/^(INPUT|SELECT|TEXTAREA|BUTTON|IFRAME|SUMMARY)$/.test(el.tagName)) return true;
  if (el.tagName === 'A' && el.hasAttribute('href')) return true;
  return el.getAttribute('contenteditable') === 'true';
}

function clickLike(win, el, detail = 1) {
  const down = pointerFire(win, el, 'pointerdown', { buttons: 1 });
  const mdown = down.defaultPrevented ? null : fire(win, el, win.MouseEvent, 'mousedown', { buttons: 1, detail });
  if (mdown && !mdown.defaultPrevented && isFocusable(el) && el.ownerDocument.activeElement !== el) el.focus();
  pointerFire(win, el, 'pointerup');
  fire(win, el, win.MouseEvent, 'mouseup', { detail });
  const click = fire(win, el, win.MouseEvent, 'click', { detail });
  return click.defaultPrevented;
}

function setNativeValue(win, el, value) {
  const proto = el.tagName === 'TEXTAREA' ? win.HTMLTextAreaElement.prototype : el.tagName === 'SELECT' ? win.HTMLSelectElement.prototype : win.HTMLInputElement.prototype;
  const descriptor = Object.getOwnPropertyDescriptor(proto, 'value');
  if (descriptor && descriptor.set) descriptor.set.call(el, value);
  else el.value = value;
}

function inputEvent(win, el, type, data, inputType) {
  const Ctor = win.InputEvent || win.Event;
  const ev = new Ctor(type, { bubbles: true, cancelable: type === 'beforeinput', composed: true, data, inputType });
  el.dispatchEvent(ev);
  return ev;
}

function changeEvent(win, el) {
  el.dispatchEvent(new win.Event('change', { bubbles: true }));
}

const TEXT_INPUT_TYPES = new Set(['', 'text', 'search', 'email', 'url', 'tel', 'password', 'number', 'date', 'datetime-local', 'month', 'week', 'time', 'color']);

function fillKind(el) {
  if (el.tagName === 'TEXTAREA') return 'value';
  if (el.tagName === 'INPUT' && TEXT_INPUT_TYPES.has((el.getAttribute('type') || '').toLowerCase())) return 'value';
  if (el.isContentEditable || el.getAttribute('contenteditable') === 'true') return 'content';
  return null;
}

function requireFillable(el, action) {
  const kind = fillKind(el);
  if (!kind) refuse(`cannot ${action} a <${el.tagName.toLowerCase()}${el.type ? ` type=${el.type}` : ''}>: it takes no typed text`);
  if (el.readOnly) refuse(`cannot ${action} ${labelFor(el)}: it is read-only`);
  return kind;
}

function ensureFocus(el) {
  if (el.ownerDocument.activeElement !== el && typeof el.focus === 'function') el.focus();
}

function fillValue(win, el, text, action) {
  const kind = requireFillable(el, action);
  ensureFocus(el);
  const before = inputEvent(win, el, 'beforeinput', text, text ? 'insertReplacementText' : 'deleteContentBackward');
  if (before.defaultPrevented) return true;
  if (kind === 'content') el.textContent = text;
  else setNativeValue(win, el, text);
  inputEvent(win, el, 'input', text, text ? 'insertReplacementText' : 'deleteContentBackward');
  changeEvent(win, el);
  return false;
}

function keyInit(key, mods) {
  const code = key.length === 1 ? (/[a-z]/i.test(key) ? `Key${key.toUpperCase()}` : key === ' ' ? 'Space' : '') : key;
  return { key, code, ctrlKey: mods.ctrl, shiftKey: mods.shift, altKey: mods.alt, metaKey: mods.meta, bubbles: true, cancelable: true, composed: true };
}

function typeChar(win, el, ch, kind) {
  const mods = { ctrl: false, shift: false, alt: false, meta: false };
  const down = new win.KeyboardEvent('keydown', keyInit(ch, mods));
  el.dispatchEvent(down);
  if (!down.defaultPrevented) {
    el.dispatchEvent(new win.KeyboardEvent('keypress', keyInit(ch, mods)));
    const before = inputEvent(win, el, 'beforeinput', ch, 'insertText');
    if (!before.defaultPrevented) {
      if (kind === 'content') el.textContent += ch;
      else setNativeValue(win, el, `${el.value}${ch}`);
      inputEvent(win, el, 'input', ch, 'insertText');
    }
  }
  el.dispatchEvent(new win.KeyboardEvent('keyup', keyInit(ch, mods)));
}

function parseKey(spec) {
  if (typeof spec !== 'string' || spec.length === 0) refuse("press needs args.key, e.g. 'Enter', 'Escape', 'Tab', 'a' or 'Control+a'");
  const parts = spec === '+' ? ['+'] : spec.split('+');
  const key = parts.pop() || '+';
  const mods = { ctrl: false, shift: false, alt: false, meta: false };
  for (const m of parts) {
    const low = m.toLowerCase();
    if (low === 'control' || low === 'ctrl') mods.ctrl = true;
    else if (low === 'shift') mods.shift = true;
    else if (low === 'alt' || low === 'option') mods.alt = true;
    else if (low === 'meta' || low === 'cmd' || low === 'command') mods.meta = true;
    else refuse(`unknown key modifier '${m}' in '${spec}'`);
  }
  return { key: key === 'Space' ? ' ' : key, mods };
}

function tabbables(doc) {
  return Array.from(doc.querySelectorAll('a[href],button,input,select,textarea,summary,[tabindex],[contenteditable="true"]')).filter(
    (el) => !isDisabled(el) && Number(el.getAttribute('tabindex') ?? 0) >= 0 && isVisible(el) && !(el.tagName === 'INPUT' && el.type === 'hidden'),
  );
}

function defaultButton(form) {
  return Array.from(form.elements || []).find((c) => isSubmitButton(c)) || null;
}

function press(win, el, args) {
  const { key, mods } = parseKey(args.key);
  const doc = el.ownerDocument;
  if (isFocusable(el)) ensureFocus(el);
  const down = new win.KeyboardEvent('keydown', keyInit(key, mods));
  el.dispatchEvent(down);
  let prevented = down.defaultPrevented;
  const printable = key.length === 1 && !mods.ctrl && !mods.meta && !mods.alt;
  if (!prevented && (printable || key === 'Enter')) {
    const kp = new win.KeyboardEvent('keypress', keyInit(key, mods));
    el.dispatchEvent(kp);
    prevented = kp.defaultPrevented;
  }
  if (!prevented) {
    const tag = el.tagName;
    if (key === 'Enter' && tag === 'INPUT' && el.form && fillKind(el)) {
      const button = defaultButton(el.form);
      if (button) {
        if (!isDisabled(button)) clickLike(win, button);
      } else if (typeof el.form.requestSubmit === 'function') el.form.requestSubmit();
    } else if (key === 'Enter' && (tag === 'BUTTON' || (tag === 'A' && el.hasAttribute('href')) || tag === 'SUMMARY' || el.getAttribute('role') === 'button')) {
      clickLike(win, el);
    } else if (key === ' ' && (tag === 'BUTTON' || (tag === 'INPUT' && /^(checkbox|radio|button|submit)$/.test(el.type)) || el.getAttribute('role') === 'button' || el.getAttribute('role') === 'checkbox')) {
      clickLike(win, el);
    } else if (key === 'Tab') {
      const list = tabbables(doc);
      const at = list.indexOf(doc.activeElement);
      const next = list[(at + (mods.shift ? -1 : 1) + list.length) % list.length];
      if (next) next.focus();
    } else if (printable && fillKind(el) && !el.readOnly) {
      const before = inputEvent(win, el, 'beforeinput', key, 'insertText');
      if (!before.defaultPrevented) {
        if (fillKind(el) === 'content') el.textContent += key;
        else setNativeValue(win, el, `${el.value}${key}`);
        inputEvent(win, el, 'input', key, 'insertText');
      }
    }
  }
  el.dispatchEvent(new win.KeyboardEvent('keyup', keyInit(key, mods)));
  return prevented;
}

function selectOptions(win, el, wanted) {
  if (el.tagName !== 'SELECT') refuse(`cannot select on ${labelFor(el)}: it is not a <select>; click its option instead`);
  const values = Array.isArray(wanted) ? wanted.map(String) : wanted === undefined ? [] : [String(wanted)];
  if (values.length === 0) refuse('select needs args.value (an option value or label, or an array of them for a multiple select)');
  if (values.length > 1 && !el.multiple) refuse(`${labelFor(el)} is a single select; pass one value`);
  const options = Array.from(el.options);
  const chosen = values.map((v) => options.find((o) => o.value === v) || options.find((o) => o.textContent.trim() === v.trim()));
  const missing = values.filter((v, i) => !chosen[i]);
  if (missing.length) {
    const available = options.slice(0, 20).map((o) => `${o.value}${o.textContent.trim() !== o.value ? ` (${o.textContent.trim()})` : ''}`);
    refuse(`${labelFor(el)} has no option ${missing.map((m) => `'${m}'`).join(', ')}; options: ${available.join(', ')}`);
  }
  ensureFocus(el);
  for (const o of options) o.selected = chosen.includes(o);
  inputEvent(win, el, 'input', null, undefined);
  changeEvent(win, el);
  return chosen.map((o) => o.value);
}

function setChecked(win, el, desired) {
  const native = el.tagName === 'INPUT' && (el.type === 'checkbox' || el.type === 'radio');
  const role = el.getAttribute('role');
  if (!native && !['checkbox', 'switch', 'radio', 'menuitemcheckbox'].includes(role)) {
    refuse(`cannot ${desired ? 'check' : 'uncheck'} ${labelFor(el)}: it is not a checkbox, radio or switch`);
  }
  if (!desired && (el.type === 'radio' || role === 'radio')) refuse(`cannot uncheck ${labelFor(el)}: a radio button is unchecked by choosing another one`);
  const current = native ? el.checked : el.getAttribute('aria-checked') === 'true';
  if (current === desired) return { dispatched: false, warning: `${labelFor(el)} was already ${desired ? 'checked' : 'unchecked'}; nothing dispatched` };
  const prevented = clickLike(win, el);
  return { dispatched: true, prevented };
}

function submitForm(win, el) {
  const form = el.tagName === 'FORM' ? el : el.form || el.closest('form');
  if (!form) refuse(`cannot submit from ${labelFor(el)}: it is not in a form`);
  if (typeof form.requestSubmit === 'function') {
    form.requestSubmit(isSubmitButton(el) ? el : undefined);
    return false;
  }
  const ev = new win.Event('submit', { bubbles: true, cancelable: true });
  form.dispatchEvent(ev);
  return ev.defaultPrevented;
}

function occlusionOf(doc, el, refs) {
  if (!hasLayout(doc) || typeof doc.elementFromPoint !== 'function') return { occluded: false, occludedBy: null, targetMatched: true };
  const r = el.getBoundingClientRect();
  const hit = doc.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  if (!hit || hit === el || el.contains(hit)) return { occluded: false, occludedBy: null, targetMatched: true };
  if (hit.contains(el) || (hit.tagName === 'LABEL' && hit.control === el)) return { occluded: false, occludedBy: null, targetMatched: true };
  return { occluded: true, occludedBy: `${labelFor(hit)} (ref=${refs.refFor(hit)})`, targetMatched: false };
}

function dispatch(win, el, action, args) {
  let prevented = false;
  let dispatched = true;
  let warning;
  let scrolledIntoView = false;
  const scroll = () => {
    if (typeof el.scrollIntoView === 'function') {
      el.scrollIntoView({ block: 'center', inline: 'nearest' });
      scrolledIntoView = true;
    }
  };
  switch (action) {
    case ActAction.CLICK:
      scroll();
      prevented = clickLike(win, el, 1);
      break;
    case ActAction.DBLCLICK:
      scroll();
      clickLike(win, el, 1);
      clickLike(win, el, 2);
      prevented = fire(win, el, win.MouseEvent, 'dblclick', { detail: 2 }).defaultPrevented;
      break;
    case ActAction.HOVER:
      scroll();
      pointerFire(win, el, 'pointerover');
      pointerFire(win, el, 'pointerenter', { bubbles: false });
      fire(win, el, win.MouseEvent, 'mouseover');
      fire(win, el, win.MouseEvent, 'mouseenter', { bubbles: false });
      pointerFire(win, el, 'pointermove');
      prevented = fire(win, el, win.MouseEvent, 'mousemove').defaultPrevented;
      break;
    case ActAction.FOCUS:
      if (!isFocusable(el)) warning = `${labelFor(el)} is not focusable; focus() was called anyway`;
      el.focus();
      break;
    case ActAction.BLUR:
      el.blur();
      break;
    case ActAction.FILL: {
      const value = args.value ?? args.text;
      if (value === undefined || value === null || typeof value === 'object') refuse('fill needs args.value (a string)');
      prevented = fillValue(win, el, String(value), 'fill');
      break;
    }
    case ActAction.CLEAR:
      prevented = fillValue(win, el, '', 'clear');
      break;
    case ActAction.TYPE: {
      const text = args.text ?? args.value;
      if (text === undefined || text === null || typeof text === 'object') refuse('type needs args.text (a string)');
      const kind = requireFillable(el, 'type into');
      ensureFocus(el);
      for (const ch of String(text)) typeChar(win, el, ch, kind);
      changeEvent(win, el);
      break;
    }
    case ActAction.SELECT:
      selectOptions(win, el, args.value ?? args.values);
      break;
    case ActAction.CHECK:
    case ActAction.UNCHECK: {
      const out = setChecked(win, el, action === ActAction.CHECK);
      dispatched = out.dispatched;
      prevented = Boolean(out.prevented);
      warning = out.warning;
      break;
    }
    case ActAction.SUBMIT:
      prevented = submitForm(win, el);
      break;
    case ActAction.PRESS:
      prevented = press(win, el, args);
      break;
    case ActAction.SCROLL_INTO_VIEW:
      scroll();
      if (!scrolledIntoView) warning = 'this page has no scrollIntoView (no layout engine); nothing scrolled';
      dispatched = scrolledIntoView;
      break;
    default:
      refuse(`unknown action '${action}'`);
  }
  return { prevented, dispatched, warning, scrolledIntoView };
}

function validateStep(step) {
  if (!step || typeof step !== 'object' || Array.isArray(step)) return "act needs an object {ref, action, args?}";
  if (typeof step.action !== 'string' || !ACTIONS.has(step.action)) {
    return `unknown action '${String(step.action)}' (known: ${[...ACTIONS].join(', ')})`;
  }
  if (step.args !== undefined && (typeof step.args !== 'object' || step.args === null || Array.isArray(step.args))) {
    return 'act args must be an object';
  }
  if (step.settle !== undefined && !Object.values(ActSettleMode).includes(step.settle)) {
    return `unknown settle '${String(step.settle)}' (known: ${Object.values(ActSettleMode).join(', ')})`;
  }
  return null;
}

/** One act; resolves `{ok:true, result}` or `{ok:false, error}`. Never rejects. */
export async function runAct(ctx, step) {
  const invalid = validateStep(step);
  if (invalid) return { ok: false, error: invalid };
  const { ref, action } = step;
  const args = step.args || {};
  const found = ctx.refs.resolve(ref);
  if (!found.ok) return { ok: false, error: found.error };
  const el = found.el;
  const { win, doc } = ctx;
  const danger = dangerOf(el, action, args);
  if (danger && args.confirmDangerous !== true) {
    return { ok: false, error: `potentially destructive action blocked (${danger}); retry with args.confirmDangerous=true` };
  }
  if (NEEDS_ENABLED.has(action) && isDisabled(el)) {
    return { ok: false, error: `ref '${ref}' (${labelFor(el)}) is disabled; nothing was dispatched` };
  }
  const visible = isVisible(el);
  const occlusion = occlusionOf(doc, el, ctx.refs);
  const before = { active: doc.activeElement, value: valueOf(el), checked: el.checked };
  const mutations = watchMutations(doc);
  let outcome;
  try {
    outcome = dispatch(win, el, action, args);
  } catch (err) {
    mutations.stop();
    if (err instanceof Refusal) return { ok: false, error: err.message };
    return { ok: false, error: `${action} on ref '${ref}' threw in a page handler: ${err && err.message ? err.message : String(err)}` };
  }
  const settleOptions = ctx.settle || {};
  // A daemon that observes the consequence itself asks for one task; quiet is the default.
  const settle =
    step.settle === ActSettleMode.TASK
      ? await waitForTask({ win, clock: ctx.clock, maxMs: ActSettle.TASK_MAX_MS })
      : await waitForQuiet({
          clock: ctx.clock,
          mutations,
          pendingRequests: ctx.pendingRequests || (() => 0),
          quietMs: settleOptions.quietMs ?? ActSettle.QUIET_MS,
          maxMs: settleOptions.maxMs ?? ActSettle.MAX_MS,
        });
  mutations.stop();
  const after = doc.activeElement;
  const focusMoved =
    after !== before.active
      ? `${before.active && before.active !== doc.body ? ctx.refs.refFor(before.active) : 'body'}->${after && after !== doc.body ? ctx.refs.refFor(after) : 'body'}`
      : null;
  const valueChanged = el.isConnected ? valueOf(el) !== before.value || el.checked !== before.checked : false;
  const result = {
    ok: true,
    ref,
    action,
    dispatched: outcome.dispatched,
    settled: settle.settled,
    settleReason: settle.settleReason,
    effect: {
      dispatched: outcome.dispatched,
      targetMatched: occlusion.targetMatched,
      visible,
      enabled: !isDisabled(el),
      defaultPrevented: outcome.prevented,
      focusMoved,
      valueChanged,
      domMutatedWithin: mutations.count,
      occluded: occlusion.occluded,
      occludedBy: occlusion.occludedBy,
      scrolledIntoView: outcome.scrolledIntoView,
      stillConnected: el.isConnected,
    },
  };
  const testid = testidOf(el);
  if (testid) result.testid = testid;
  const warnings = [outcome.warning, occlusion.occluded ? `the target is covered by ${occlusion.occludedBy}` : null, visible ? null : `ref '${ref}' is not visible`].filter(Boolean);
  if (warnings.length) result.warning = warnings.join('; ');
  if (isPasswordField(el) && result.effect.valueChanged) result.effect.value = '[REDACTED]';
  return { ok: true, result };
}

export async function runActSequence(ctx, args = {}) {
  const steps = args.steps;
  if (!Array.isArray(steps) || steps.length === 0) return { ok: false, error: 'act_sequence needs args.steps, a non-empty array of {ref, action, args?}' };
  if (steps.length > CommandLimits.ACT_SEQUENCE_MAX_STEPS) {
    return { ok: false, error: `act_sequence takes at most ${CommandLimits.ACT_SEQUENCE_MAX_STEPS} steps (got ${steps.length})` };
  }
  const done = [];
  const effects = [];
  for (let i = 0; i < steps.length; i += 1) {
    const step = steps[i];
    const out = await runAct(ctx, step);
    if (!out.ok) {
      const what = step && typeof step === 'object' ? `${String(step.action)} ${String(step.ref)}` : 'invalid step';
      return { ok: false, error: `step ${i + 1} of ${steps.length} (${what}) failed after ${done.length} completed: ${out.error}` };
    }
    const r = out.result;
    effects.push(r.effect);
    const summary = { ref: r.ref, action: r.action, dispatched: r.dispatched, settled: r.settled, settleReason: r.settleReason };
    if (r.testid) summary.testid = r.testid;
    if (r.warning) summary.warning = r.warning;
    done.push(summary);
  }
  return { ok: true, result: { ok: true, count: done.length, effects, steps: done } };
}
