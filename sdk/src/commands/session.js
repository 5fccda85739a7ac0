// commands/session.js — commands a daemon pushes on its own: flows, presenter, narrate,
// session_config. Answered so the daemon sees `ok:true`, as the published SDK does.
//
// Owns: recording the flow list (capabilities reports it), passing presenter state and
// narration to the badge when one is mounted, acknowledging session_config.
// Must not: act on the page.

const PRESENTER_STATES = ['active', 'paused', 'ended'];

export function runFlows(ctx, args = {}) {
  if (!Array.isArray(args.flows)) return { ok: false, error: 'flows needs args.flows (an array of {name, start?})' };
  ctx.flows.splice(0, ctx.flows.length, ...args.flows.filter((f) => f && typeof f.name === 'string').slice(0, 200));
  return { ok: true, result: { applied: true, count: ctx.flows.length } };
}

export function runPresenter(ctx, args = {}) {
  if (!PRESENTER_STATES.includes(args.state)) return { ok: false, error: `presenter state must be one of ${PRESENTER_STATES.join(', ')}` };
  if (ctx.presenter) ctx.presenter.setAgentState(args.state, args.text);
  return { ok: true, result: { applied: true, shown: Boolean(ctx.presenter && ctx.presenter.mounted) } };
}

export function runNarrate(ctx, args = {}) {
  if (typeof args.text !== 'string') return { ok: false, error: 'narrate needs args.text (a string)' };
  const shown = ctx.presenter ? ctx.presenter.narrate(args.text) : false;
  return { ok: true, result: { shown } };
}

export function runSessionConfig(ctx, args = {}) {
  if (args.idleEndMs !== undefined && (typeof args.idleEndMs !== 'number' || !Number.isFinite(args.idleEndMs))) {
    return { ok: false, error: 'session_config idleEndMs must be a number' };
  }
  return { ok: true, result: { applied: true, idleEndMs: args.idleEndMs ?? null } };
}
