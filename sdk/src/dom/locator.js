// dom/locator.js — the user-facing locator of an element: what a person would call it.
//
// Owns: `candidateTargets(el)`, the locators an element allows, best first (role and name, label,
// testid, placeholder, text), and `locatorFor(ctx, el)`, the first of them that this SDK's own
// query (query.js `findElements`, the same matching a replay's target goes through) resolves to
// this element and no other; null when none does.
// Must not: return a ref or a css selector (a flow never keeps either), or change the page.

import { findElements } from './query.js';
import { labelTextOf, nameOf, roleOf, testidOf, textOf } from './roles.js';

/** Roles that say nothing a user would name an element by. */
const GENERIC_ROLES = new Set(['', 'generic', 'none', 'presentation', 'group']);
const LABELLED_TAGS = new Set(['INPUT', 'SELECT', 'TEXTAREA']);
const TEXT_LIMIT = 160;

function clean(value) {
  const text = String(value ?? '').replace(/\s+/g, ' ').trim();
  return text || null;
}

export function candidateTargets(el) {
  const out = [];
  const role = roleOf(el);
  const name = clean(nameOf(el, role));
  if (!GENERIC_ROLES.has(role) && name) out.push({ role, name });
  const label = LABELLED_TAGS.has(el.tagName) ? clean(labelTextOf(el)) : null;
  if (label) out.push({ label });
  const testid = clean(testidOf(el));
  if (testid) out.push({ testid });
  const placeholder = clean(el.getAttribute('placeholder'));
  if (placeholder) out.push({ placeholder });
  const text = clean(textOf(el, TEXT_LIMIT)) || name;
  if (text) out.push({ text });
  return out;
}

export function locatorFor(ctx, el) {
  for (const target of candidateTargets(el)) {
    const found = findElements(ctx, target);
    if (found.ok && found.elements.length === 1 && found.elements[0] === el) return target;
  }
  return null;
}
