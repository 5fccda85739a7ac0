// protocol.js — the one place where Reticle protocol 1's vocabulary and this SDK's limits live.
//
// Owns: the protocol version, message kinds, event type names, command names, act action names,
// WebSocket close codes, size/count limits, storage keys, reconnect and queue tuning.
// Must not: hold behaviour. Every other module imports names from here instead of spelling a
// string again, so the SDK cannot drift from the wire the daemon (and the published SDK) speak.

export const PROTOCOL_VERSION = 1;
export const SDK_NAME = 'reticle-rs-sdk';
export const SDK_VERSION = '0.1.0';
// The wire contract this SDK speaks: the daemon's fingerprint of the golden messages' field
// names (reticle::wire::CONTRACT, computed from reticle/src/wire/fixtures). The drift test
// fails until it is copied here when a field is added, renamed or dropped.
export const WIRE_CONTRACT = '808677dfc55c';

export const DEFAULT_PORT = 4400;
export const WS_PATH = '/reticle';
export const LOOPBACK_HOSTS = Object.freeze(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** The four message kinds of protocol 1 (field `kind`). */
export const MessageKind = Object.freeze({
  HELLO: 'hello',
  COMMAND: 'command',
  COMMAND_RESULT: 'command_result',
  EVENT: 'event',
});

/**
 * Event types this SDK emits. Every name is one of protocol 1's 24 event types as the published
 * 2.0.0 SDK knows them, so a daemon built for that vocabulary accepts every frame we send.
 * (console.info / console.debug are reported as `console.log` with `data.level`.)
 */
export const EventType = Object.freeze({
  DOM_ADDED: 'dom.added',
  DOM_REMOVED: 'dom.removed',
  DOM_ATTR: 'dom.attr',
  DOM_TEXT: 'dom.text',
  NET_REQUEST: 'net.request',
  NET_PENDING: 'net.pending',
  ROUTE_CHANGE: 'route.change',
  CONSOLE_LOG: 'console.log',
  CONSOLE_WARN: 'console.warn',
  CONSOLE_ERROR: 'console.error',
  ERROR_UNCAUGHT: 'error.uncaught',
  SIGNAL: 'signal',
  STATE_CHANGE: 'state.change',
  PAGE_HEALTH: 'page.health',
  FLOW_RECORDED: 'flow.recorded',
  TRANSPORT_OVERFLOW: 'transport.overflow',
});

/**
 * Low-value events: the first to go when the offline queue overflows. Losing one of these
 * never hides a fact an agent asserts on (a request, an error, a route, a signal).
 */
export const CHURN_EVENT_TYPES = Object.freeze(
  new Set([EventType.DOM_TEXT, EventType.PAGE_HEALTH, 'anim.start', 'anim.end', 'scroll.position']),
);

/** Command names (field `name` of a `command` message). */
export const CommandName = Object.freeze({
  SNAPSHOT: 'snapshot',
  QUERY: 'query',
  MATCH: 'match',
  INSPECT: 'inspect',
  ACT: 'act',
  ACT_SEQUENCE: 'act_sequence',
  STATE_READ: 'state_read',
  NAVIGATE: 'navigate',
  REFRESH: 'refresh',
  CAPABILITIES: 'capabilities',
  SCROLL: 'scroll',
  CLOCK: 'clock',
  ANIMATIONS: 'animations',
  // This SDK's own: capture response bodies for a while (a published 2.0.0 page refuses it).
  NET_BODIES: 'net_bodies',
  // This SDK's own: record a person's clicks and typing (a published 2.0.0 page refuses it).
  RECORD: 'record',
  // Pushed by a daemon without being asked for by an agent; answered so the daemon sees `ok`.
  FLOWS: 'flows',
  PRESENTER: 'presenter',
  NARRATE: 'narrate',
  SESSION_CONFIG: 'session_config',
});

/** `act` action names (field `args.action`). */
export const ActAction = Object.freeze({
  CLICK: 'click',
  DBLCLICK: 'dblclick',
  HOVER: 'hover',
  FOCUS: 'focus',
  BLUR: 'blur',
  FILL: 'fill',
  TYPE: 'type',
  CLEAR: 'clear',
  SELECT: 'select',
  CHECK: 'check',
  UNCHECK: 'uncheck',
  SUBMIT: 'submit',
  PRESS: 'press',
  SCROLL_INTO_VIEW: 'scrollIntoView',
});

export const SnapshotMode = Object.freeze({ FULL: 'full', INTERACTIVE: 'interactive', STATUS: 'status' });

/** WebSocket close codes that the SDK reads or sends. */
export const CloseCode = Object.freeze({
  NORMAL: 1000,
  /** Policy violation: the daemon refused us (version, auth, schema, replaced session). */
  POLICY: 1008,
  TOO_BIG: 1009,
  TRY_AGAIN_LATER: 1013,
});

/**
 * How the daemon's close reasons that the SDK acts on start (`reticle/src/wire/close.rs` holds the
 * same words). SESSION_IN_USE: another open page (a same-origin iframe, a duplicated tab, a popup)
 * carries this session id; the SDK connects this page under an id of its own.
 */
export const CloseReasonStart = Object.freeze({
  SESSION_IN_USE: 'session in use',
});

/** The reasons this SDK closes its own socket with. */
export const CloseReasonSent = Object.freeze({
  /** `disconnect()` was called. */
  DISCONNECT: 'disconnect',
  /** The document went into the back/forward cache; its tab's next document owns the session. */
  PAGE_HIDDEN: 'pagehide',
});

/** Protocol limits the daemon enforces; the SDK keeps inside them rather than get closed. */
export const Limits = Object.freeze({
  MAX_FRAME_BYTES: 1024 * 1024,
  MAX_SESSION_ID: 128,
  MAX_COMMAND_ID: 128,
  MAX_COMMAND_NAME: 128,
  MAX_REF: 128,
  MAX_URL: 4096,
  MAX_TITLE: 512,
  MAX_TOKEN: 512,
  MAX_ERROR: 4096,
  MAX_ADAPTERS: 32,
  MAX_STORE_NAME: 128,
  MAX_SIGNAL_NAME: 128,
});

/** What the SDK's serializer keeps of any value it sends (events' data, command results). */
export const SerializeLimits = Object.freeze({
  MAX_DEPTH: 8,
  MAX_NODES: 1000,
  MAX_ITEMS: 200,
  MAX_STRING: 65536,
  MAX_TOTAL_STRING: 131072,
});

/** Offline queue and reconnect tuning. */
export const Transport = Object.freeze({
  QUEUE_LIMIT: 500,
  BACKOFF_BASE_MS: 250,
  BACKOFF_CAP_MS: 30000,
  /** A socket open this long (or that received a frame) counts as an established connection. */
  ESTABLISHED_AFTER_MS: 1000,
  /** Failed first attempts before the one "cannot reach the daemon" warning. */
  UNREACHABLE_WARN_AFTER: 3,
});

export const HEALTH_INTERVAL_MS = 5000;
export const MUTATION_WINDOW_MS = 100;
export const DOM_SAMPLES_PER_WINDOW = 10;

export const Snapshot = Object.freeze({ MAX_NODES: 400, MAX_DEPTH: 20, MAX_NAME: 100 });
export const QUERY_DEFAULT_LIMIT = 50;

/** Per-command bounds. */
export const CommandLimits = Object.freeze({
  QUERY_MAX_LIMIT: 500,
  ACT_SEQUENCE_MAX_STEPS: 50,
  STATE_DEFAULT_DEPTH: 4,
  STATE_MAX_KEYS_LISTED: 50,
  CLOCK_MAX_ADVANCE_MS: 24 * 60 * 60 * 1000,
  CLOCK_MAX_FIRINGS_PER_ADVANCE: 10000,
  CAPABILITIES_MAX_TESTIDS: 200,
});

/** Per-observer bounds. */
export const ObserverLimits = Object.freeze({
  CONSOLE_MESSAGE_CHARS: 2000,
  DOM_SAMPLE_TEXT_CHARS: 80,
  SIGNAL_NAMES_KEPT: 500,
});

/** Response bodies, captured only while a daemon asks (`net_bodies`). */
export const NetBodyLimits = Object.freeze({
  /** The most characters of one body a `net.request` carries (`bodyTruncated` says when cut). */
  BODY_CHARS: 16 * 1024,
  /** The most bytes read from one response before reading stops. */
  READ_BYTES: 64 * 1024,
  /** How long reading one body may delay its `net.request` (a stream that never ends). */
  READ_MS: 2000,
  /** The longest one `net_bodies` request keeps capture on. */
  CAPTURE_MAX_MS: 2 * 60 * 1000,
});

/** Keys in sessionStorage (per tab, survives reload and same-tab navigation). */
export const StorageKey = Object.freeze({
  SESSION_ID: '__reticle_session',
  REF_BASE: '__reticle_ref_base',
});

/** Refs are reserved in blocks so a reload continues numbering after the last block. */
export const REF_BLOCK = 100;

/** URL query parameter that may carry a session id (same name the published SDK reads). */
export const SESSION_URL_PARAM = '__reticle_session';
export const SESSION_AUTO = 'auto';

/** Prefix of every console line the SDK itself writes. */
export const LOG_TAG = '[reticle]';

/** Attribute on any DOM the SDK itself mounts: observers and snapshots skip it. */
export const OWN_UI_ATTR = 'data-reticle-ui';

/** Act settling: wait for the DOM and the network to go quiet, within a bound; or, asked
 * `settle: 'task'` (a daemon that observes the consequence itself), one task. */
export const ActSettle = Object.freeze({ QUIET_MS: 60, MAX_MS: 1500, TASK_MAX_MS: 100 });

/** How an `act` settles before it answers (the daemon's `wire::args::ActSettle`). */
export const ActSettleMode = Object.freeze({ QUIET: 'quiet', TASK: 'task' });
