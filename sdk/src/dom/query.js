// dom/query.js — find elements the way a user names them; check them against a state.
//
// Owns: `runQuery(ctx, args)` (criteria: role, name, text, label, placeholder, testid, alt, css,
// or `{by, value}`; all given criteria must hold) and `runMatch(ctx, args)` (`{query, state}`;
// its result lists `statesReported`, so a daemon can tell "not in that state" from "not reported",
// and `exactHonoured`, so it can tell "no name holds that part" from "names matched whole").
// Matching, as Testing Library does: after NFC and whitespace folding, `name` matches the whole
// string, case-sensitively; other text criteria match case-insensitive substrings, whole ones
// first. `exact: true` makes every one whole, `exact: false` every one a substring. `testid` and
// `role` always match exactly.
// Must not: return an ancestor merely because a descendant holds the text (text matches keep the
// deepest elements only), nor throw on a bad selector (a refusal names it).

import { CommandLimits, OWN_UI_ATTR, QUERY_DEFAULT_LIMIT } from '../protocol.js';
import { candidateSelector } from './candidates.js';
import { describeElement } from './describe.js';
import {
  hasLayout,
  isDisabled,
  isLandmarkRole,
  isOwnUi,
  isSkippedTag,
  labelTextOf,
  nameOf,
  REPORTED_STATES,
  roleOf,
  testidOf,
  textOf,
} from './roles.js';
import { pageStatus } from './snapshot.js';
import { resolveScope } from './scope.js';

export const QUERY_KEYS = Object.freeze(['role', 'name', 'text', 'label', 'placeholder', 'testid', 'alt', 'css']);

function fold(s) {
  return String(s ?? '').normalize('NFC').replace(/\s+/g, ' ').trim();
}

/** 0 = whole, 1 = contains, -1 = no match; `exact` = whole and case-sensitive only. */
function textScore(actual, wanted, exact) {
  const a = fold(actual);
  const w = fold(wanted);
  if (exact) return a === w ? 0 : -1;
  const al = a.toLowerCase();
  const wl = w.toLowerCase();
  if (al === wl) return 0;
  return wl && al.includes(wl) ? 1 : -1;
}

/** The `exact` a query asked for: a boolean, or undefined for the defaults. */
function exactOf(query) {
  return typeof query?.exact === 'boolean' ? query.exact : undefined;
}

/** Normalises `{by, value}` and flat criteria into one criteria object, or a refusal. */
export function criteriaFrom(args) {
  if (!args || typeof args !== 'object' || Array.isArray(args)) return { ok: false, error: 'query arguments must be an object' };
  const criteria = {};
  if (args.by !== undefined) {
    if (!QUERY_KEYS.includes(args.by)) {
      return { ok: false, error: `unknown query 'by' value '${String(args.by)}' (use one of ${QUERY_KEYS.join(', ')})` };
    }
    if (typeof args.value !== 'string' || args.value === '') return { ok: false, error: `query by ${args.by} needs a non-empty string 'value'` };
    criteria[args.by] = args.value;
  }
  for (const key of QUERY_KEYS) {
    if (args[key] === undefined || args[key] === null) continue;
    if (typeof args[key] !== 'string') return { ok: false, error: `query '${key}' must be a string` };
    criteria[key] = args[key];
  }
  if (Object.keys(criteria).length === 0) {
    return { ok: false, error: `query needs at least one of ${QUERY_KEYS.join(', ')} (or by + value)` };
  }
  return { ok: true, criteria };
}

/** Elements matching every criterion, in document order, whole matches first. */
export function findElements(ctx, criteria, { scope, exact } = {}) {
  const scoped = resolveScope(ctx, scope);
  if (!scoped.ok) return scoped;
  let candidates;
  try {
    if (criteria.css) {
      candidates = Array.from(scoped.el.querySelectorAll(criteria.css));
      if (scoped.el.matches && scoped.el.matches(criteria.css)) candidates.unshift(scoped.el);
    } else {
      candidates = ctx.candidates.select(scoped.el, candidateSelector(criteria));
    }
  } catch {
    return { ok: false, error: `css '${criteria.css}' is not a valid CSS selector` };
  }
  const role = criteria.role === undefined ? undefined : criteria.role.trim().toLowerCase();
  const scored = [];
  for (const el of candidates) {
    // Every check is a pure read, so their order is free: the criteria first (cheapest first),
    // then, for the few that pass, the ancestor walk that keeps out the SDK's own UI.
    if (criteria.testid !== undefined && testidOf(el) !== criteria.testid) continue;
    if (role !== undefined && roleOf(el) !== role) continue;
    let score = 0;
    let ok = true;
    const test = (actual, wanted, key) => {
      const s = textScore(actual, wanted, exact ?? key === 'name');
      if (s < 0) ok = false;
      else score += s;
    };
    if (criteria.placeholder !== undefined) test(el.getAttribute('placeholder'), criteria.placeholder);
    if (ok && criteria.alt !== undefined) test(el.getAttribute('alt'), criteria.alt);
    if (ok && criteria.label !== undefined) {
      const labelable = /^(INPUT|SELECT|TEXTAREA|METER|PROGRESS|OUTPUT)$/.test(el.tagName) || el.hasAttribute('aria-labelledby') || el.hasAttribute('aria-label');
      if (!labelable) continue;
      test(labelTextOf(el), criteria.label);
    }
    if (ok && criteria.name !== undefined) test(nameOf(el), criteria.name, 'name');
    if (ok && criteria.text !== undefined) test(textOf(el), criteria.text);
    if (!ok || isSkippedTag(el) || el.hasAttribute(OWN_UI_ATTR) || isOwnUi(el)) continue;
    scored.push({ el, score });
  }
  let matches = scored;
  if (criteria.text !== undefined) {
    // keep the deepest: drop an element when one of its descendants matched too
    const hasMatchedDescendant = new Set();
    for (const m of scored) {
      for (let up = m.el.parentElement; up && !hasMatchedDescendant.has(up); up = up.parentElement) hasMatchedDescendant.add(up);
    }
    matches = scored.filter((m) => !hasMatchedDescendant.has(m.el));
  }
  const exactFirst = matches.filter((m) => m.score === 0).concat(matches.filter((m) => m.score !== 0));
  return { ok: true, elements: exactFirst.map((m) => m.el) };
}

function zeroMatchHint(ctx) {
  const { doc } = ctx;
  const testids = [];
  for (const el of doc.querySelectorAll('[data-testid]')) {
    if (isOwnUi(el)) continue;
    const id = el.getAttribute('data-testid');
    if (!testids.includes(id)) testids.push(id);
    if (testids.length >= 40) break;
  }
  const regions = [];
  for (const el of doc.body ? doc.body.querySelectorAll('*') : []) {
    const role = roleOf(el);
    if (isLandmarkRole(role)) regions.push(nameOf(el, role) ? `${role} "${nameOf(el, role)}"` : role);
    if (regions.length >= 20) break;
  }
  return { route: pageStatus(ctx).route, presentTestids: testids, presentRegions: regions, knownEmptyState: false };
}

export function runQuery(ctx, args = {}) {
  const parsed = criteriaFrom(args);
  if (!parsed.ok) return parsed;
  const limit = clampLimit(args.limit);
  const found = findElements(ctx, parsed.criteria, { scope: args.scope, exact: exactOf(args) });
  if (!found.ok) return found;
  const layout = hasLayout(ctx.doc);
  const elements = found.elements.slice(0, limit).map((el) => describeElement(el, ctx.refs, layout));
  const result = { elements, count: found.elements.length };
  if (found.elements.length > limit) result.truncated = true;
  if (elements.length === 0) result.hint = zeroMatchHint(ctx);
  return { ok: true, result };
}

function clampLimit(limit) {
  const n = Number(limit);
  if (!Number.isFinite(n) || n <= 0) return QUERY_DEFAULT_LIMIT;
  return Math.min(Math.floor(n), CommandLimits.QUERY_MAX_LIMIT);
}

const STATE_KEYS = ['visible', 'enabled', 'disabled', 'checked', 'focused', 'value', 'text', 'name', 'count'];

function satisfies(desc, el, state, exact) {
  if (state.visible !== undefined && desc.visible !== Boolean(state.visible)) return false;
  if (state.enabled !== undefined && isDisabled(el) === Boolean(state.enabled)) return false;
  if (state.disabled !== undefined && isDisabled(el) !== Boolean(state.disabled)) return false;
  if (state.checked !== undefined && desc.states.includes('checked') !== Boolean(state.checked)) return false;
  if (state.focused !== undefined && desc.states.includes('focused') !== Boolean(state.focused)) return false;
  if (state.value !== undefined && String(desc.value ?? '') !== String(state.value)) return false;
  if (state.text !== undefined && textScore(textOf(el), state.text, false) < 0) return false;
  if (state.name !== undefined && textScore(desc.name, state.name, exact ?? true) < 0) return false;
  return true;
}

export function runMatch(ctx, args = {}) {
  if (!args || typeof args.query !== 'object' || args.query === null || Array.isArray(args.query)) {
    return { ok: false, error: "match needs 'query' (an object such as {role, name} or {testid})" };
  }
  const state = args.state ?? {};
  if (typeof state !== 'object' || Array.isArray(state)) return { ok: false, error: "match 'state' must be an object" };
  const unknownState = Object.keys(state).filter((k) => !STATE_KEYS.includes(k));
  if (unknownState.length) return { ok: false, error: `match 'state' has unknown keys ${unknownState.join(', ')} (known: ${STATE_KEYS.join(', ')})` };
  const parsed = criteriaFrom(args.query);
  if (!parsed.ok) {
    return { ok: true, result: { matched: false, count: 0, elements: [], reason: parsed.error } };
  }
  const found = findElements(ctx, parsed.criteria, { scope: args.query.scope, exact: exactOf(args.query) });
  if (!found.ok) return found;
  const layout = hasLayout(ctx.doc);
  const passing = [];
  for (const el of found.elements) {
    const desc = describeElement(el, ctx.refs, layout);
    if (satisfies(desc, el, state, exactOf(args.query))) passing.push(desc);
  }
  let matched = passing.length > 0;
  if (state.count !== undefined) matched = passing.length === Number(state.count);
  return {
    ok: true,
    result: {
      matched,
      count: passing.length,
      candidates: found.elements.length,
      elements: passing.slice(0, QUERY_DEFAULT_LIMIT),
      statesReported: REPORTED_STATES,
      exactHonoured: true,
    },
  };
}
