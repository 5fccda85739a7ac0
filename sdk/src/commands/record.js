// commands/record.js — `record {action:"start", id} | {action:"stop"}`: a person's recording.
//
// Owns: checking the command's arguments and handing them to the page's recorder (recorder.js).
// Must not: record anything itself.

export function runRecord(ctx, args = {}) {
  if (!ctx.recorder) return { ok: false, error: 'this page has no recorder' };
  if (args.action === 'start') {
    if (args.id !== undefined && typeof args.id !== 'string') return { ok: false, error: 'record id must be a string' };
    return ctx.recorder.start(args.id);
  }
  if (args.action === 'stop') return ctx.recorder.stop();
  return { ok: false, error: "record needs args.action 'start' or 'stop'" };
}
