// dom/snapshot.js — the page as an agent reads it: an indented accessibility-ish outline.
//
// Owns: `takeSnapshot(ctx, args)` → `{tree, status, nodes, truncated, mode}` and
// `pageStatus(ctx)`. A line is one space per level of nesting, the role, the name in quotes, the
// ref, then annotations: ` button "Sign in" e4 [disabled] [testid=login]` (kept lean: an agent
// pays for every byte; the published 2.0.0 SDK writes `- button "Sign in" (ref=e4)`).
// Modes: `full` (landmarks, headings, text, controls, nested), `interactive` (controls only,
// flat), `status` (no tree, just route/title/dialogs).
// Must not: change the page; it only reads (and mints refs for what it shows).

import { OWN_UI_ATTR, Snapshot, SnapshotMode } from '../protocol.js';
import { redactUrl } from '../serialize.js';
import {
  hasLayout,
  isHiddenBySelf,
  isInteractiveRole,
  isSkippedTag,
  isVisible,
  nameOf,
  roleOf,
  statesOf,
  testidOf,
  textOf,
  valueOf,
} from './roles.js';
import { resolveScope } from './scope.js';

const SILENT_ROLES = new Set(['generic', 'presentation', 'label', 'none']);
/** Roles whose line already carries their text content as the name. */
const NAME_FROM_CONTENT_LINE = new Set(['button', 'link', 'heading', 'paragraph', 'listitem', 'cell', 'columnheader', 'rowheader', 'option', 'tab', 'menuitem', 'status', 'alert', 'legend', 'caption']);
const CLIPPED_TEXT = 100;

export function pageStatus({ win, doc, refs }) {
  const dialogs = [];
  for (const el of doc.querySelectorAll('dialog[open], [role="dialog"], [role="alertdialog"]')) {
    if (el.closest(`[${OWN_UI_ATTR}]`)) continue;
    if (!isVisible(el)) continue;
    dialogs.push({ ref: refs.refFor(el), role: roleOf(el), name: nameOf(el) });
  }
  const active = doc.activeElement && doc.activeElement !== doc.body ? refs.refFor(doc.activeElement) : null;
  let route = '';
  try {
    route = redactUrl(`${win.location.pathname}${win.location.search}${win.location.hash}`);
  } catch {
    route = '';
  }
  return { route, title: doc.title || '', visibleDialogs: dialogs, focused: active };
}

function isFocusableGeneric(el) {
  const tabindex = el.getAttribute('tabindex');
  return (tabindex !== null && Number(tabindex) >= 0) || el.getAttribute('contenteditable') === 'true';
}

function directText(el) {
  let out = '';
  for (const child of el.childNodes) if (child.nodeType === 3) out += child.nodeValue;
  return out.replace(/\s+/g, ' ').trim();
}

function quote(s) {
  return JSON.stringify(s);
}

export function takeSnapshot(ctx, args = {}) {
  const { doc, refs, win } = ctx;
  const mode = args.mode === undefined ? SnapshotMode.FULL : args.mode;
  if (!Object.values(SnapshotMode).includes(mode)) {
    return { ok: false, error: `unknown snapshot mode '${String(mode)}' (use full, interactive or status)` };
  }
  const status = pageStatus(ctx);
  if (mode === SnapshotMode.STATUS) return { ok: true, result: { tree: '', status, nodes: 0, truncated: false, mode } };

  const scoped = resolveScope(ctx, args.scope);
  if (!scoped.ok) return scoped;
  const lines = [];
  let truncated = false;
  const interactiveOnly = mode === SnapshotMode.INTERACTIVE;

  function emit(el, role, depth, textOverride) {
    if (lines.length >= Snapshot.MAX_NODES) {
      truncated = true;
      return false;
    }
    const parts = [`${' '.repeat(interactiveOnly ? 0 : depth)}${role}`];
    const name = textOverride ?? nameOf(el, role);
    if (name) parts.push(quote(name.length > CLIPPED_TEXT ? `${name.slice(0, CLIPPED_TEXT - 1)}…` : name));
    const testid = testidOf(el);
    const wantsRef = textOverride === undefined && (isInteractiveRole(role) || name || testid || isFocusableGeneric(el));
    if (wantsRef) parts.push(refs.refFor(el));
    if (role === 'heading') {
      const level = el.getAttribute('aria-level') || (/^H([1-6])$/.exec(el.tagName) || [])[1];
      if (level) parts.push(`[level=${level}]`);
    }
    if (textOverride === undefined) {
      const value = valueOf(el);
      if (value !== undefined && value !== '') parts.push(`[value=${quote(String(value).slice(0, CLIPPED_TEXT))}]`);
      const states = statesOf(el);
      if (states.length) parts.push(`[${states.join(',')}]`);
      if (testid) parts.push(`[testid=${testid}]`);
    }
    lines.push(parts.join(' '));
    return true;
  }

  /** `covered`: an ancestor's line already shows this subtree's text. */
  function walk(el, depth, covered) {
    if (truncated) return;
    if (el.nodeType !== 1 || isSkippedTag(el) || el.hasAttribute(OWN_UI_ATTR)) return;
    if (isHiddenBySelf(el, win)) return;
    if (depth > Snapshot.MAX_DEPTH) {
      truncated = true;
      return;
    }
    const role = roleOf(el);
    let childDepth = depth;
    let childCovered = covered;
    if (interactiveOnly) {
      if (isInteractiveRole(role) || isFocusableGeneric(el)) emit(el, role, 0);
    } else if (!SILENT_ROLES.has(role) || testidOf(el) || isFocusableGeneric(el)) {
      if (!emit(el, role, depth)) return;
      childDepth = depth + 1;
      if (NAME_FROM_CONTENT_LINE.has(role)) childCovered = true;
    } else if (!covered && role !== 'label') {
      if (directText(el)) {
        if (!emit(el, 'text', depth, textOf(el, CLIPPED_TEXT))) return;
        childCovered = true;
      }
    } else if (role === 'label') {
      childCovered = true; // a label's text is its control's name
    }
    if (role === 'iframe' || el.tagName === 'SELECT') return;
    let children = el.shadowRoot ? [...el.shadowRoot.children, ...el.children] : el.children;
    if (el.tagName === 'DETAILS' && !el.open) children = Array.from(el.children).filter((c) => c.tagName === 'SUMMARY');
    for (const child of children) walk(child, childDepth, childCovered);
  }

  const root = scoped.el === doc.documentElement ? doc.body || doc.documentElement : scoped.el;
  if (isVisible(root, hasLayout(doc))) walk(root, 0, false);
  return { ok: true, result: { tree: lines.join('\n'), status, nodes: lines.length, truncated, mode } };
}
