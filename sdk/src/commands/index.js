// commands/index.js — the command registry: command name → handler.
//
// Owns: the single table mapping every protocol command name (from protocol.js) to the function
// that answers it. A handler takes `(ctx, args)` and returns (or resolves to) `{ok:true, result,
// after?}` or `{ok:false, error}`.
// Must not: contain command logic; each family lives in its own module.

import { CommandName } from '../protocol.js';
import { takeSnapshot } from '../dom/snapshot.js';
import { runMatch, runQuery } from '../dom/query.js';
import { runAct, runActSequence } from './act.js';
import { runInspect } from './inspect.js';
import { readState } from './state.js';
import { runAnimations, runCapabilities, runNavigate, runRefresh, runScroll } from './page.js';
import { runClock } from './clock.js';
import { runNetBodies } from './network.js';
import { runRecord } from './record.js';
import { runFlows, runNarrate, runPresenter, runSessionConfig } from './session.js';

export const COMMAND_HANDLERS = Object.freeze({
  [CommandName.SNAPSHOT]: takeSnapshot,
  [CommandName.QUERY]: runQuery,
  [CommandName.MATCH]: runMatch,
  [CommandName.INSPECT]: runInspect,
  [CommandName.ACT]: runAct,
  [CommandName.ACT_SEQUENCE]: runActSequence,
  [CommandName.STATE_READ]: readState,
  [CommandName.NAVIGATE]: runNavigate,
  [CommandName.REFRESH]: runRefresh,
  [CommandName.CAPABILITIES]: runCapabilities,
  [CommandName.SCROLL]: runScroll,
  [CommandName.CLOCK]: runClock,
  [CommandName.ANIMATIONS]: runAnimations,
  [CommandName.NET_BODIES]: runNetBodies,
  [CommandName.RECORD]: runRecord,
  [CommandName.FLOWS]: runFlows,
  [CommandName.PRESENTER]: runPresenter,
  [CommandName.NARRATE]: runNarrate,
  [CommandName.SESSION_CONFIG]: runSessionConfig,
});
