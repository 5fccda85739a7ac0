// dom/candidates.js — which elements a query has to look at: narrowed by the browser, and kept
// while the part of the DOM that decides them is unchanged.
//
// Owns: `candidateSelector(criteria)`, the CSS selector for the elements that can possibly satisfy
// a query without a `css` criterion. A `testid` narrows to elements carrying that value in one
// of the three testid attributes; a `role` to elements with a `role` attribute or a tag that can
// carry the role implicitly (roles.js `tagsWithImplicitRole`); anything else is every element
// (`*`). A value a CSS string cannot carry exactly (NUL, a lone surrogate) falls back to `*`.
// And `createCandidateCache(doc)`: the candidate lists of unscoped queries, per selector. What
// such a selector selects depends only on the document's tree and its `role` and testid
// attributes, so a MutationObserver on exactly those (watching only while a list is kept) drops
// every list on any change; each lookup first takes the observer's pending records, so a change
// made earlier in the same task counts as well. A scoped query (its root may sit in a shadow tree, out of the observer's sight) and a
// page's own `css` (it may read state no mutation reports, like :checked) are never cached.
// Must not: decide a match. A list only ever holds a superset: query.js still checks every
// criterion on every candidate, so narrowing and caching save work and never change an answer.
// (Selectors see HTML names: a foreign-namespace element named `BUTTON` in upper case, or a
// `role`/testid attribute set with setAttributeNS in a namespace, is outside them.)

import { tagsWithImplicitRole } from './roles.js';

const TESTID_ATTRS = ['data-testid', 'data-test-id', 'data-test'];
const SELECTOR_ATTRS = ['role', ...TESTID_ATTRS];
const PLAIN = /^[A-Za-z0-9 _-]$/;
/** NUL reads back as U+FFFD in CSS; a lone surrogate has no code point to escape. */
const UNREPRESENTABLE = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** Distinct selectors kept at once; past this the cache starts over. */
export const MAX_CACHED_SELECTORS = 64;

/** `value` as a double-quoted CSS string, or null when CSS would not read back the same string. */
export function cssString(value) {
  if (UNREPRESENTABLE.test(value)) return null;
  let out = '"';
  for (const ch of value) out += PLAIN.test(ch) ? ch : `\\${ch.codePointAt(0).toString(16)} `;
  return `${out}"`;
}

export function candidateSelector(criteria) {
  if (criteria.testid !== undefined) {
    const quoted = cssString(criteria.testid);
    if (quoted !== null) return TESTID_ATTRS.map((attr) => `[${attr}=${quoted}]`).join(',');
  }
  if (criteria.role !== undefined) {
    const tags = tagsWithImplicitRole(criteria.role.trim().toLowerCase());
    if (tags !== null) return [...tags, '[role]'].join(',');
  }
  return '*';
}

export function createCandidateCache(doc) {
  const lists = new Map();
  // The observer watches only while a list is kept: the first change drops every list and stops
  // it, so a page busy between queries pays for no records nobody will read.
  let watching = false;
  const observer = new doc.defaultView.MutationObserver(() => forget());
  function forget() {
    lists.clear();
    if (watching) observer.disconnect();
    watching = false;
  }
  return {
    /** `root.querySelectorAll(selector)` as an array the caller must not change; `selector` from candidateSelector. */
    select(root, selector) {
      if (root !== doc.documentElement) return Array.from(root.querySelectorAll(selector));
      if (watching && observer.takeRecords().length > 0) forget();
      let list = lists.get(selector);
      if (!list) {
        if (lists.size >= MAX_CACHED_SELECTORS) lists.clear();
        list = Object.freeze(Array.from(root.querySelectorAll(selector)));
        lists.set(selector, list);
        if (!watching) {
          observer.observe(doc, { childList: true, subtree: true, attributes: true, attributeFilter: SELECTOR_ATTRS });
          watching = true;
        }
      }
      return list;
    },
    stop() {
      forget();
    },
  };
}
