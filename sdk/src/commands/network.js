// commands/network.js — `net_bodies`: the daemon asks for response bodies for a while.
//
// Owns: validating `{forMs}` and turning capture on through the context's body capture
// (observers/bodies.js). Must not: read bodies itself or turn capture on without a bound.

import { NetBodyLimits } from '../protocol.js';

export function runNetBodies(ctx, args = {}) {
  const forMs = Number(args && args.forMs);
  if (!Number.isFinite(forMs) || forMs <= 0) {
    return { ok: false, error: `net_bodies needs 'forMs', a positive number of milliseconds (at most ${NetBodyLimits.CAPTURE_MAX_MS})` };
  }
  const span = ctx.netBodies.captureFor(forMs);
  return { ok: true, result: { capturing: true, forMs: span, maxChars: NetBodyLimits.BODY_CHARS } };
}
