// log.js — the SDK's own console output, and how the console observer recognises it.
//
// Owns: `createSdkLog(console)` (tagged warnings, `once(key, ...)`) and `isSdkSpeaking()`.
// Must not: let an SDK warning be reported as an app console event. It writes through the
// console as the page currently has it (so dev tools still show it) while a flag is raised,
// and the console observer drops anything written while the flag is up.

import { LOG_TAG } from './protocol.js';

let speakingDepth = 0;

/** True while the SDK itself is writing to the console. */
export function isSdkSpeaking() {
  return speakingDepth > 0;
}

export function createSdkLog(consoleLike) {
  const warned = new Set();
  function write(level, message) {
    const sink = consoleLike && typeof consoleLike[level] === 'function' ? consoleLike : null;
    if (!sink) return;
    speakingDepth += 1;
    try {
      sink[level](`${LOG_TAG} ${message}`);
    } catch {
      // A broken console must not break the SDK.
    } finally {
      speakingDepth -= 1;
    }
  }
  return {
    warn: (message) => write('warn', message),
    info: (message) => write('info', message),
    /** Warns at most once per key for the life of this log. Returns true when it wrote. */
    once(key, message) {
      if (warned.has(key)) return false;
      warned.add(key);
      write('warn', message);
      return true;
    },
    /** Lets a key warn again (e.g. the next outage). */
    rearm(key) {
      warned.delete(key);
    },
  };
}
