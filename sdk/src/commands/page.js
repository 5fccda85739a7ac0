// commands/page.js — page-level commands: navigate, refresh, scroll, capabilities, animations.
//
// Owns: validating and answering those five. Navigation and reload are scheduled to happen
// *after* the reply is sent (`after`), so the daemon always gets its answer before the page
// unloads.
// Must not: navigate anywhere but http(s), or scroll anything other than the container asked for.

import { CommandLimits, CommandName, Limits, PROTOCOL_VERSION, SDK_NAME, SDK_VERSION } from '../protocol.js';
import { isOwnUi } from '../dom/roles.js';
import { redactUrl } from '../serialize.js';

export function runNavigate(ctx, args = {}) {
  const { url } = args;
  if (typeof url !== 'string' || url.trim() === '') return { ok: false, error: "navigate needs args.url (a string)" };
  if (url.length > Limits.MAX_URL) return { ok: false, error: `navigate url is longer than ${Limits.MAX_URL} characters` };
  let target;
  try {
    target = new URL(url, ctx.win.location.href);
  } catch {
    return { ok: false, error: `navigate url '${url.slice(0, 200)}' is not a valid URL` };
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    return { ok: false, error: `only http(s) navigation is allowed (got ${target.protocol})` };
  }
  const href = target.href;
  return { ok: true, result: { ok: true, url: redactUrl(href) }, after: () => ctx.win.location.assign(href) };
}

export function runRefresh(ctx, args = {}) {
  const { win } = ctx;
  if (args.hard === true) {
    const target = new URL(win.location.href);
    target.searchParams.set('_reticle_reload', String(Math.floor(ctx.clock.wallNow())));
    return { ok: true, result: { ok: true, hard: true }, after: () => win.location.replace(target.href) };
  }
  return { ok: true, result: { ok: true, hard: false }, after: () => win.location.reload() };
}

export function runScroll(ctx, args = {}) {
  const { doc, win } = ctx;
  let el = doc.scrollingElement || doc.documentElement;
  let isPage = true;
  if (args.ref !== undefined) {
    const found = ctx.refs.resolve(args.ref);
    if (!found.ok) return { ok: false, error: found.error };
    el = found.el;
    isPage = el === doc.scrollingElement || el === doc.documentElement || el === doc.body;
  }
  if (args.dy !== undefined && (typeof args.dy !== 'number' || !Number.isFinite(args.dy))) return { ok: false, error: 'scroll dy must be a finite number of pixels' };
  if (args.fraction !== undefined && (typeof args.fraction !== 'number' || !(args.fraction >= 0 && args.fraction <= 1))) {
    return { ok: false, error: 'scroll fraction must be a number from 0 to 1' };
  }
  const before = el.scrollTop;
  const clientHeight = isPage ? win.innerHeight || el.clientHeight : el.clientHeight;
  const range = Math.max(0, el.scrollHeight - clientHeight);
  let top;
  if (args.fraction !== undefined) top = args.fraction * range;
  else if (args.dy !== undefined) top = before + args.dy;
  else top = before + Math.max(1, Math.round(clientHeight * 0.9));
  top = Math.max(0, Math.min(range, top));
  if (isPage && typeof win.scrollTo === 'function' && !args.ref) {
    try {
      win.scrollTo(0, top);
    } catch {
      el.scrollTop = top;
    }
  } else {
    el.scrollTop = top;
  }
  const scrollTop = el.scrollTop;
  return {
    ok: true,
    result: {
      scrolled: scrollTop !== before,
      scrollTop,
      scrollHeight: el.scrollHeight,
      clientHeight,
      atEnd: scrollTop + clientHeight >= el.scrollHeight - 1,
    },
  };
}

export function runCapabilities(ctx) {
  const testids = [];
  for (const el of ctx.doc.querySelectorAll('[data-testid]')) {
    if (isOwnUi(el)) continue;
    const id = el.getAttribute('data-testid');
    if (!testids.includes(id)) testids.push(id);
    if (testids.length >= CommandLimits.CAPABILITIES_MAX_TESTIDS) break;
  }
  return {
    ok: true,
    result: {
      testids,
      signals: Array.from(ctx.signals),
      stores: ctx.stores.names(),
      flows: ctx.flows.map((f) => ({ name: f.name, steps: Array.isArray(f.steps) ? f.steps : [] })),
      commands: Object.values(CommandName),
      sdk: { name: SDK_NAME, version: SDK_VERSION, protocolVersion: PROTOCOL_VERSION },
    },
  };
}

export function runAnimations(ctx) {
  const list = typeof ctx.doc.getAnimations === 'function' ? ctx.doc.getAnimations() : [];
  return {
    ok: true,
    result: {
      animations: list.slice(0, 100).map((a) => {
        let duration = null;
        try {
          duration = a.effect && a.effect.getTiming ? a.effect.getTiming().duration : null;
        } catch {
          duration = null;
        }
        return { playState: a.playState, currentTime: a.currentTime, duration, name: a.animationName || a.id || '' };
      }),
    },
  };
}
