// dom/describe.js — the compact descriptor every command returns for an element.
//
// Owns: `describeElement(el, refs, layout)` → `{ref, role, name, states, visible, value?, text?,
// testid?, tag}`.
// Must not: mutate the element. Minting the element's ref is the one side effect, on purpose:
// whatever an agent can see it can address.

import { nameOf, roleOf, statesOf, testidOf, textOf, valueOf, isVisible, hasLayout } from './roles.js';

const TEXT_LIMIT = 160;

export function describeElement(el, refs, layout = hasLayout(el.ownerDocument)) {
  const role = roleOf(el);
  const name = nameOf(el, role);
  const out = {
    ref: refs.refFor(el),
    role,
    name,
    states: statesOf(el),
    visible: isVisible(el, layout),
    tag: el.tagName.toLowerCase(),
  };
  const value = valueOf(el);
  if (value !== undefined) out.value = value;
  const text = textOf(el, TEXT_LIMIT);
  if (text && text !== name) out.text = text;
  const testid = testidOf(el);
  if (testid) out.testid = testid;
  return out;
}
