// commands/inspect.js — `inspect {ref}`: everything the SDK can tell about one element.
//
// Owns: the inspect result: the element descriptor plus tag, href, form, box, occlusion, a few
// computed styles.
// Must not: answer for a stale ref with data about some other element; that is a refusal.

import { describeElement } from '../dom/describe.js';
import { hasLayout, labelFor } from '../dom/roles.js';
import { redactUrl } from '../serialize.js';

const STYLE_KEYS = ['color', 'backgroundColor', 'opacity', 'cursor', 'display', 'visibility'];

export function runInspect(ctx, args = {}) {
  const found = ctx.refs.resolve(args.ref);
  if (!found.ok) return { ok: false, error: found.error };
  const { el } = found;
  const { doc, win } = ctx;
  const layout = hasLayout(doc);
  const out = describeElement(el, ctx.refs, layout);
  if (el.hasAttribute('href')) out.href = redactUrl(el.href || el.getAttribute('href'));
  const form = el.form || (el.closest && el.closest('form'));
  if (form) {
    out.formAction = redactUrl(form.getAttribute('action') || '');
    out.formRef = ctx.refs.refFor(form);
    out.formText = labelFor(form);
  }
  let box = { x: 0, y: 0, width: 0, height: 0 };
  try {
    const r = el.getBoundingClientRect();
    box = { x: Math.round(r.x ?? r.left), y: Math.round(r.y ?? r.top), width: Math.round(r.width), height: Math.round(r.height) };
  } catch {
    // no layout
  }
  out.box = box;
  out.layout = layout;
  out.occluded = false;
  if (layout && typeof doc.elementFromPoint === 'function') {
    const hit = doc.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2);
    if (hit && hit !== el && !el.contains(hit) && !hit.contains(el)) {
      out.occluded = true;
      out.occludedBy = `${labelFor(hit)} (ref=${ctx.refs.refFor(hit)})`;
    }
  }
  const styles = {};
  try {
    const cs = win.getComputedStyle(el);
    for (const key of STYLE_KEYS) styles[key] = cs[key];
  } catch {
    // detached or no style engine
  }
  out.styles = styles;
  const attrs = {};
  for (const attr of Array.from(el.attributes).slice(0, 30)) {
    if (attr.name === 'value' || attr.name === 'style') continue;
    attrs[attr.name] = attr.value.slice(0, 200);
  }
  out.attributes = attrs;
  return { ok: true, result: out };
}
