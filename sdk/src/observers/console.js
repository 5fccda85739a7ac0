// observers/console.js — the app's console output and its uncaught errors, as events.
//
// Owns: wrapping console.log/info/debug/warn/error (reported as console.log with `level`,
// console.warn, console.error) and listening for `error` and `unhandledrejection` on the window
// (reported as error.uncaught).
// Must not: report the SDK's own warnings (see log.js `isSdkSpeaking`), change what the page's
// console prints, or throw from inside a console call.

import { EventType, ObserverLimits } from '../protocol.js';
import { isSdkSpeaking } from '../log.js';
import { toWireValue } from '../serialize.js';

const LEVELS = [
  ['log', EventType.CONSOLE_LOG],
  ['info', EventType.CONSOLE_LOG],
  ['debug', EventType.CONSOLE_LOG],
  ['warn', EventType.CONSOLE_WARN],
  ['error', EventType.CONSOLE_ERROR],
];

export function formatConsoleArgs(args) {
  const parts = [];
  for (const arg of args) {
    if (typeof arg === 'string') parts.push(arg);
    else if (arg instanceof Error || (arg && typeof arg === 'object' && typeof arg.message === 'string' && typeof arg.name === 'string')) {
      parts.push(`${arg.name}: ${arg.message}`);
    } else {
      let text;
      try {
        text = JSON.stringify(toWireValue(arg, { maxDepth: 3 }));
      } catch {
        text = String(arg);
      }
      parts.push(text === undefined ? String(arg) : text);
    }
  }
  const message = parts.join(' ');
  const limit = ObserverLimits.CONSOLE_MESSAGE_CHARS;
  return message.length > limit ? `${message.slice(0, limit)}…` : message;
}

export function observeConsole({ win, emit }) {
  const con = win.console;
  const restores = [];
  let active = true;
  if (con) {
    for (const [level, type] of LEVELS) {
      const original = con[level];
      if (typeof original !== 'function') continue;
      const wrapped = function reticleConsole(...args) {
        if (active && !isSdkSpeaking()) {
          try {
            const data = { message: formatConsoleArgs(args) };
            if (type === EventType.CONSOLE_LOG && level !== 'log') data.level = level;
            emit(type, data);
          } catch {
            // reporting must never break the app's logging
          }
        }
        return original.apply(this, args);
      };
      con[level] = wrapped;
      restores.push(() => {
        if (con[level] === wrapped) con[level] = original;
      });
    }
  }

  const onError = (ev) => {
    if (!active || !ev || ev.type !== 'error') return;
    if (ev.target && ev.target !== win && ev.target.nodeType === 1) return; // resource load errors
    try {
      const err = ev.error;
      const data = {
        message: String(ev.message || (err && err.message) || 'uncaught error'),
        source: ev.filename || '',
        line: ev.lineno || 0,
        column: ev.colno || 0,
      };
      if (err && typeof err.stack === 'string') data.stack = err.stack.slice(0, 2000);
      emit(EventType.ERROR_UNCAUGHT, data);
    } catch {
      // never throw from an error handler
    }
  };
  const onRejection = (ev) => {
    if (!active) return;
    try {
      const reason = ev && ev.reason;
      const message = reason && typeof reason.message === 'string' ? reason.message : formatConsoleArgs([reason]);
      const data = { message, kind: 'unhandledrejection' };
      if (reason && typeof reason.stack === 'string') data.stack = reason.stack.slice(0, 2000);
      emit(EventType.ERROR_UNCAUGHT, data);
    } catch {
      // never throw from an error handler
    }
  };
  win.addEventListener('error', onError);
  win.addEventListener('unhandledrejection', onRejection);

  return function stop() {
    active = false;
    for (const restore of restores) restore();
    win.removeEventListener('error', onError);
    win.removeEventListener('unhandledrejection', onRejection);
  };
}
