// dom/refs.js — element refs (`e1`, `e2`, ...): minted once per element, never reused.
//
// Owns: `createRefRegistry({store})`. `refFor(el)` mints or returns an element's ref;
// `resolve(ref)` returns `{ok:true, el}` or `{ok:false, error}` naming why the ref is stale.
// Numbering continues across reloads of the tab: blocks of REF_BLOCK numbers are reserved in
// sessionStorage (`__reticle_ref_base`), so a ref from an earlier document can never resolve to
// an element of this one. Without sessionStorage the base comes from the wall clock instead.
// Must not: resolve a ref to any element other than the one it was minted for; a detached or
// collected element is a refusal, never a fallback lookup.

import { REF_BLOCK, StorageKey, Limits } from '../protocol.js';

const REF_PATTERN = /^e(\d{1,15})$/;
const SWEEP_EVERY = 1000;

export function createRefRegistry({ store, wallNow = () => Date.now() } = {}) {
  const byElement = new WeakMap();
  /** @type {Map<number, WeakRef<Element>>} */
  const byNumber = new Map();
  const startBase = reserveStart();
  let next = startBase + 1;
  let reservedUpTo = startBase;
  let minted = 0;

  function reserveStart() {
    const stored = store ? Number(store.get(StorageKey.REF_BASE)) : NaN;
    if (store && store.persistent) return Number.isSafeInteger(stored) && stored >= 0 ? stored : 0;
    // No tab storage: start from the clock so a reload cannot restart at e1.
    return (Math.floor(wallNow()) % 1e8) * 100;
  }

  function reserveThrough(n) {
    if (n <= reservedUpTo) return;
    reservedUpTo = Math.ceil(n / REF_BLOCK) * REF_BLOCK;
    if (store) store.set(StorageKey.REF_BASE, String(reservedUpTo));
  }

  function sweep() {
    for (const [num, weak] of byNumber) {
      const el = weak.deref();
      if (!el) byNumber.delete(num);
    }
  }

  return {
    /** The element's ref, minting one the first time the element is seen. */
    refFor(el) {
      const known = byElement.get(el);
      if (known) return known;
      const num = next;
      next += 1;
      reserveThrough(num);
      const ref = `e${num}`;
      byElement.set(el, ref);
      byNumber.set(num, new WeakRef(el));
      minted += 1;
      if (minted % SWEEP_EVERY === 0) sweep();
      return ref;
    },
    /** The ref already given to an element, without minting. */
    peek(el) {
      return byElement.get(el) || null;
    },
    /**
     * @returns {{ok: true, el: Element} | {ok: false, error: string, stale: boolean}}
     */
    resolve(ref) {
      if (typeof ref !== 'string' || ref.length === 0 || ref.length > Limits.MAX_REF) {
        return { ok: false, stale: false, error: `ref must be a string like 'e12' (got ${describeBad(ref)})` };
      }
      const m = REF_PATTERN.exec(ref);
      if (!m) return { ok: false, stale: false, error: `ref '${ref}' is not a ref this SDK mints (expected e<number>)` };
      const num = Number(m[1]);
      if (num <= startBase) {
        return {
          ok: false,
          stale: true,
          error: `ref '${ref}' is stale: it was minted before this page was (re)loaded; take a new snapshot or query`,
        };
      }
      if (num >= next) {
        return { ok: false, stale: false, error: `ref '${ref}' was never issued on this page; take a snapshot or query first` };
      }
      const el = byNumber.get(num)?.deref();
      if (!el) {
        byNumber.delete(num);
        return { ok: false, stale: true, error: `ref '${ref}' is stale: its element no longer exists; take a new snapshot or query` };
      }
      if (!el.isConnected) {
        return {
          ok: false,
          stale: true,
          error: `ref '${ref}' is stale: its element was removed or replaced (e.g. by a re-render); nothing ran on whatever sits there now. Take a new snapshot or query`,
        };
      }
      return { ok: true, el };
    },
    get firstRefNumber() {
      return startBase + 1;
    },
    get nextRefNumber() {
      return next;
    },
  };
}

function describeBad(v) {
  if (typeof v === 'string') return v.length ? `a ${v.length}-character string` : 'an empty string';
  return v === undefined ? 'nothing' : typeof v;
}
