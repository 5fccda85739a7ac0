// dom/scope.js — turns a `scope` argument (a ref or a CSS selector) into a root element.
//
// Owns: `resolveScope(ctx, scope)` → `{ok:true, el}` or a refusal `{ok:false, error}`.
// Must not: guess. A stale ref, a bad selector or a selector matching nothing is a refusal.

const REF_LIKE = /^e\d+$/;

export function resolveScope({ doc, refs }, scope) {
  if (scope === undefined || scope === null || scope === '') return { ok: true, el: doc.documentElement };
  if (typeof scope !== 'string') return { ok: false, error: 'scope must be a ref (e12) or a CSS selector string' };
  if (REF_LIKE.test(scope)) {
    const found = refs.resolve(scope);
    return found.ok ? { ok: true, el: found.el } : { ok: false, error: `scope ${found.error}` };
  }
  let el;
  try {
    el = doc.querySelector(scope);
  } catch {
    return { ok: false, error: `scope '${scope}' is not a valid CSS selector` };
  }
  if (!el) return { ok: false, error: `scope '${scope}' matched nothing on this page` };
  return { ok: true, el };
}
