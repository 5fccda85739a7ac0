// dom/roles.js — what an element is to a user: its role, accessible name, states, visibility.
//
// Owns: `roleOf`, `nameOf`, `statesOf` (and `REPORTED_STATES`, every state it reports),
// `isVisible`, `isInteractiveRole`, `textOf`, `testidOf`, `valueOf`, `isOwnUi`,
// `tagsWithImplicitRole`. A pragmatic subset of ARIA/HTML-AAM: explicit
// roles, the common implicit roles, names from aria-labelledby, aria-label, <label>, alt, title,
// placeholder and content.
// Must not: mutate the DOM or mint refs. Everything here is a pure read.

import { OWN_UI_ATTR, Snapshot } from '../protocol.js';

const INTERACTIVE_ROLES = new Set([
  'button', 'link', 'textbox', 'searchbox', 'checkbox', 'radio', 'switch', 'combobox', 'listbox',
  'option', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab', 'slider', 'spinbutton', 'treeitem',
]);

const NAME_FROM_CONTENT = new Set([
  'button', 'link', 'heading', 'cell', 'columnheader', 'rowheader', 'option', 'tab', 'menuitem',
  'menuitemcheckbox', 'menuitemradio', 'treeitem', 'listitem', 'tooltip', 'status', 'alert', 'switch',
  'checkbox', 'radio', 'row', 'paragraph', 'legend', 'caption', 'term', 'definition', 'text',
]);

const LANDMARK_ROLES = new Set(['banner', 'navigation', 'main', 'contentinfo', 'complementary', 'region', 'form', 'search']);

const SKIPPED_TAGS = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'META', 'LINK', 'HEAD', 'TITLE', 'BASE']);

/** Elements whose text `textOf` separates from what follows. */
const BLOCK_TAGS = /^(DIV|P|LI|TR|H[1-6]|SECTION|ARTICLE|BR)$/;

export function isInteractiveRole(role) {
  return INTERACTIVE_ROLES.has(role);
}

export function isLandmarkRole(role) {
  return LANDMARK_ROLES.has(role);
}

export function isSkippedTag(el) {
  return SKIPPED_TAGS.has(el.tagName);
}

export function isOwnUi(el) {
  return Boolean(el && el.closest && el.closest(`[${OWN_UI_ATTR}]`));
}

export function testidOf(el) {
  return el.getAttribute('data-testid') || el.getAttribute('data-test-id') || el.getAttribute('data-test') || null;
}

function inputRole(el) {
  const type = (el.getAttribute('type') || 'text').toLowerCase();
  switch (type) {
    case 'button':
    case 'submit':
    case 'reset':
    case 'image':
      return 'button';
    case 'checkbox':
      return 'checkbox';
    case 'radio':
      return 'radio';
    case 'range':
      return 'slider';
    case 'number':
      return 'spinbutton';
    case 'search':
      return el.hasAttribute('list') ? 'combobox' : 'searchbox';
    case 'hidden':
      return 'none';
    default:
      return el.hasAttribute('list') ? 'combobox' : 'textbox';
  }
}

const INPUT_ROLES = ['button', 'checkbox', 'radio', 'slider', 'spinbutton', 'combobox', 'searchbox', 'none', 'textbox'];

const linkRole = (el) => (el.hasAttribute('href') ? 'link' : 'generic');
const sectioned = (el) => Boolean(el.closest('article,aside,main,nav,section'));

/**
 * Implicit roles by tag: a role, or `[every role it can take, pick(el)]` when attributes or
 * ancestors decide. Any other tag is `generic`. `tagsWithImplicitRole` reads this same table.
 */
const IMPLICIT_ROLES = new Map([
  ['A', [['link', 'generic'], linkRole]],
  ['AREA', [['link', 'generic'], linkRole]],
  ['BUTTON', 'button'],
  ['INPUT', [INPUT_ROLES, inputRole]],
  ['TEXTAREA', 'textbox'],
  ['SELECT', [['listbox', 'combobox'], (el) => (el.multiple || Number(el.getAttribute('size')) > 1 ? 'listbox' : 'combobox')]],
  ['OPTION', 'option'],
  ['H1', 'heading'],
  ['H2', 'heading'],
  ['H3', 'heading'],
  ['H4', 'heading'],
  ['H5', 'heading'],
  ['H6', 'heading'],
  ['NAV', 'navigation'],
  ['MAIN', 'main'],
  ['HEADER', [['generic', 'banner'], (el) => (sectioned(el) ? 'generic' : 'banner')]],
  ['FOOTER', [['generic', 'contentinfo'], (el) => (sectioned(el) ? 'generic' : 'contentinfo')]],
  ['ASIDE', 'complementary'],
  ['SECTION', [['region', 'generic'], (el) => (el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') ? 'region' : 'generic')]],
  ['FORM', 'form'],
  ['UL', 'list'],
  ['OL', 'list'],
  ['MENU', 'list'],
  ['LI', 'listitem'],
  ['TABLE', 'table'],
  ['TR', 'row'],
  ['TD', 'cell'],
  ['TH', [['rowheader', 'columnheader'], (el) => (el.getAttribute('scope') === 'row' ? 'rowheader' : 'columnheader')]],
  ['IMG', [['presentation', 'img'], (el) => (el.getAttribute('alt') === '' ? 'presentation' : 'img')]],
  ['DIALOG', 'dialog'],
  ['P', 'paragraph'],
  ['LABEL', 'label'],
  ['FIELDSET', 'group'],
  ['LEGEND', 'legend'],
  ['PROGRESS', 'progressbar'],
  ['OUTPUT', 'status'],
  ['IFRAME', 'iframe'],
  ['SUMMARY', 'button'],
  ['DETAILS', 'group'],
  ['HR', 'separator'],
  ['ARTICLE', 'article'],
]);

const DEFAULT_ROLE = 'generic';

/** role → the tags (lower case, as CSS type selectors) that can carry it implicitly. */
const TAGS_BY_ROLE = new Map();
for (const [tag, entry] of IMPLICIT_ROLES) {
  for (const role of typeof entry === 'string' ? [entry] : entry[0]) {
    if (!TAGS_BY_ROLE.has(role)) TAGS_BY_ROLE.set(role, []);
    TAGS_BY_ROLE.get(role).push(tag.toLowerCase());
  }
}

function implicitRole(el) {
  const entry = IMPLICIT_ROLES.get(el.tagName);
  if (entry === undefined) return DEFAULT_ROLE;
  return typeof entry === 'string' ? entry : entry[1](el);
}

/**
 * The tags whose elements can have `role` without a `role` attribute (lower case), or null when
 * any element can (`generic`, the role of every tag the table does not list).
 */
export function tagsWithImplicitRole(role) {
  if (role === DEFAULT_ROLE) return null;
  return TAGS_BY_ROLE.get(role) || [];
}

export function roleOf(el) {
  const attr = el.getAttribute('role');
  const explicit = attr ? attr.trim().split(/\s+/)[0] : '';
  if (explicit) return explicit === 'none' ? 'presentation' : explicit;
  return implicitRole(el);
}

function normalize(text) {
  return String(text ?? '').replace(/\s+/g, ' ').trim();
}

function clipName(text) {
  const t = normalize(text);
  return t.length > Snapshot.MAX_NAME ? `${t.slice(0, Snapshot.MAX_NAME - 1)}…` : t;
}

/** Visible text content of an element (skips hidden subtrees, scripts and the SDK's own UI). */
export function textOf(el, limit = 500) {
  let out = '';
  const win = el.ownerDocument.defaultView;
  function walk(node) {
    if (out.length > limit) return;
    const type = node.nodeType;
    if (type === 3) {
      out += node.nodeValue;
      return;
    }
    if (type !== 1) return;
    const tag = node.tagName;
    if (SKIPPED_TAGS.has(tag) || node.hasAttribute(OWN_UI_ATTR)) return;
    if (node !== el && isHiddenBySelf(node, win)) return;
    if (tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT') return;
    if (tag === 'IMG') {
      out += ` ${node.getAttribute('alt') || ''} `;
      return;
    }
    for (let child = node.firstChild; child; child = child.nextSibling) walk(child);
    if (win && BLOCK_TAGS.test(tag)) out += ' ';
  }
  walk(el);
  return normalize(out).slice(0, limit);
}

function byIds(el, ids) {
  const doc = el.ownerDocument;
  return ids
    .split(/\s+/)
    .filter(Boolean)
    .map((id) => doc.getElementById(id))
    .filter(Boolean)
    .map((ref) => ref.getAttribute('aria-label') || textOf(ref))
    .join(' ');
}

function labelsOf(el) {
  if (el.labels && el.labels.length) return Array.from(el.labels);
  const found = [];
  const id = el.getAttribute('id');
  if (id) {
    for (const label of el.ownerDocument.querySelectorAll('label[for]')) {
      if (label.getAttribute('for') === id) found.push(label);
    }
  }
  const wrapping = el.closest('label');
  if (wrapping && !found.includes(wrapping)) found.push(wrapping);
  return found;
}

/** Text of the labels associated with a form control. */
export function labelTextOf(el) {
  const fromLabelledBy = el.getAttribute('aria-labelledby');
  if (fromLabelledBy) return normalize(byIds(el, fromLabelledBy));
  const fromLabels = labelsOf(el).map((label) => textOf(label)).join(' ');
  if (normalize(fromLabels)) return normalize(fromLabels);
  return normalize(el.getAttribute('aria-label') || '');
}

/** Accessible name (pragmatic subset of accname 1.2). */
export function nameOf(el, role = roleOf(el)) {
  const labelledBy = el.getAttribute('aria-labelledby');
  if (labelledBy) {
    const n = byIds(el, labelledBy);
    if (normalize(n)) return clipName(n);
  }
  const aria = el.getAttribute('aria-label');
  if (aria && normalize(aria)) return clipName(aria);
  const tag = el.tagName;
  if (tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT') {
    const type = (el.getAttribute('type') || '').toLowerCase();
    if (['button', 'submit', 'reset'].includes(type)) {
      return clipName(el.value || el.getAttribute('value') || (type === 'submit' ? 'Submit' : type === 'reset' ? 'Reset' : ''));
    }
    if (type === 'image') return clipName(el.getAttribute('alt') || 'Submit');
    const fromLabels = labelsOf(el).map((label) => textOf(label)).join(' ');
    if (normalize(fromLabels)) return clipName(fromLabels);
    return clipName(el.getAttribute('title') || el.getAttribute('placeholder') || '');
  }
  if (tag === 'IMG' || tag === 'AREA') return clipName(el.getAttribute('alt') || el.getAttribute('title') || '');
  if (tag === 'FIELDSET') {
    const legend = el.querySelector(':scope > legend');
    if (legend) return clipName(textOf(legend));
  }
  if (tag === 'TABLE') {
    const caption = el.querySelector(':scope > caption');
    if (caption) return clipName(textOf(caption));
  }
  if (NAME_FROM_CONTENT.has(role)) {
    const t = textOf(el, Snapshot.MAX_NAME * 2);
    if (t) return clipName(t);
  }
  return clipName(el.getAttribute('title') || '');
}

/** Hidden by its own attributes: `hidden`, `aria-hidden="true"`, `inert`, a dialog not open. */
function isHiddenByAttributes(el) {
  if (el.hidden || el.getAttribute('aria-hidden') === 'true' || el.hasAttribute('inert')) return true;
  return el.tagName === 'DIALOG' && !el.open;
}

/** Hidden by its own attributes or computed style (ancestors not considered). */
export function isHiddenBySelf(el, win = el.ownerDocument.defaultView) {
  if (isHiddenByAttributes(el)) return true;
  const tag = el.tagName;
  if (tag === 'DETAILS') return false;
  const style = safeStyle(el, win);
  if (!style) return false;
  if (style.display === 'none') return true;
  const visibility = style.visibility; // each read of a computed style property computes it
  return visibility === 'hidden' || visibility === 'collapse';
}

function safeStyle(el, win) {
  try {
    return win && win.getComputedStyle ? win.getComputedStyle(el) : null;
  } catch {
    return null;
  }
}

/** True when the page has a layout engine (a real browser), false under jsdom. */
export function hasLayout(doc) {
  try {
    const r = doc.documentElement.getBoundingClientRect();
    return r.width > 0 || r.height > 0;
  } catch {
    return false;
  }
}

/** What `checkVisibility` is asked: CSS display, visibility and content-visibility. */
const BY_STYLE = Object.freeze({ visibilityProperty: true, checkVisibilityCSS: true });

/**
 * Hidden by itself or any ancestor, or (with layout) taking no space at all. With a layout
 * engine the browser's `checkVisibility` answers for the styles along the flat tree (display,
 * visibility, content-visibility) in one native call, about 1.7 times faster than reading each
 * ancestor's computed style; the ancestors' attributes are still read here. It follows CSS:
 * a `visibility: visible` element inside a `visibility: hidden` one is rendered, so visible.
 */
export function isVisible(el, layout = hasLayout(el.ownerDocument)) {
  const native = layout && typeof el.checkVisibility === 'function';
  const win = el.ownerDocument.defaultView;
  for (let node = el; node && node.nodeType === 1; node = node.parentElement || hostOf(node)) {
    if (native ? isHiddenByAttributes(node) : isHiddenBySelf(node, win)) return false;
    if (node.tagName === 'DETAILS' && !node.open && node !== el && !node.querySelector(':scope > summary')?.contains(el)) {
      return false;
    }
  }
  if (layout) {
    if (native && !el.checkVisibility(BY_STYLE)) return false;
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0 && el.getClientRects().length === 0) return false;
  }
  return true;
}

function hostOf(node) {
  const root = node.getRootNode && node.getRootNode();
  return root && root.host ? root.host : null;
}

export function isDisabled(el) {
  if (el.getAttribute('aria-disabled') === 'true') return true;
  if ('disabled' in el && el.disabled) return true;
  const fieldset = el.closest && el.closest('fieldset[disabled]');
  if (fieldset) {
    const firstLegend = fieldset.querySelector(':scope > legend');
    return !(firstLegend && firstLegend.contains(el));
  }
  return false;
}

export function isPasswordField(el) {
  return el.tagName === 'INPUT' && (el.getAttribute('type') || '').toLowerCase() === 'password';
}

/** Current value of a form control, masked for password fields; undefined for other elements. */
export function valueOf(el) {
  const tag = el.tagName;
  if (tag === 'INPUT') {
    const type = (el.getAttribute('type') || 'text').toLowerCase();
    if (['checkbox', 'radio', 'button', 'submit', 'reset', 'image', 'hidden', 'file'].includes(type)) return undefined;
    if (type === 'password') return el.value ? '•'.repeat(Math.min(el.value.length, 12)) : '';
    return el.value;
  }
  if (tag === 'TEXTAREA') return el.value;
  if (tag === 'SELECT') {
    const chosen = Array.from(el.selectedOptions || []).map((o) => o.value);
    return el.multiple ? chosen.join(',') : chosen[0] ?? '';
  }
  if (el.isContentEditable || el.getAttribute('contenteditable') === 'true') return textOf(el);
  const ariaValue = el.getAttribute('aria-valuenow');
  return ariaValue === null ? undefined : ariaValue;
}

/** States as short words: disabled, checked, selected, expanded, pressed, focused, ... */
/** Every state `statesOf` reports (a `match` result lists them as `statesReported`). */
export const REPORTED_STATES = Object.freeze([
  'disabled', 'checked', 'mixed', 'selected', 'expanded', 'collapsed', 'pressed', 'focused',
  'required', 'readonly', 'invalid', 'busy',
]);

export function statesOf(el) {
  const states = [];
  const doc = el.ownerDocument;
  if (isDisabled(el)) states.push('disabled');
  const ariaChecked = el.getAttribute('aria-checked');
  if ((el.tagName === 'INPUT' && (el.type === 'checkbox' || el.type === 'radio') && el.checked) || ariaChecked === 'true') {
    states.push('checked');
  }
  if (el.tagName === 'INPUT' && el.type === 'checkbox' && el.indeterminate) states.push('mixed');
  if (ariaChecked === 'mixed') states.push('mixed');
  if ((el.tagName === 'OPTION' && el.selected) || el.getAttribute('aria-selected') === 'true') states.push('selected');
  const expanded = el.getAttribute('aria-expanded');
  if (expanded === 'true') states.push('expanded');
  if (expanded === 'false') states.push('collapsed');
  if (el.getAttribute('aria-pressed') === 'true') states.push('pressed');
  if (doc.activeElement === el) states.push('focused');
  if (el.required || el.getAttribute('aria-required') === 'true') states.push('required');
  if (el.readOnly || el.getAttribute('aria-readonly') === 'true') states.push('readonly');
  if (el.getAttribute('aria-invalid') === 'true') states.push('invalid');
  if (el.getAttribute('aria-busy') === 'true') states.push('busy');
  return states;
}

/** A short "role "name"" label for messages. */
export function labelFor(el) {
  const role = roleOf(el);
  const name = nameOf(el, role);
  return name ? `${role} "${name}"` : `<${el.tagName.toLowerCase()}>`;
}
