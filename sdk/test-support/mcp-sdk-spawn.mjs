// test-support/mcp-sdk-spawn.mjs — what the official-SDK client scripts share: the environment
// the spawned server gets (the transport's safe defaults plus every RETICLE_* variable, as a
// client config's `env` block would add them) and the one-JSON-line-per-report printer.
// Must not: be imported by SDK code.

import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';

/** Writes `report` to stdout as one JSON line. */
export function print(report) {
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

/** The spawned server's environment: the transport's defaults and this process's RETICLE_*. */
export function childEnvironment() {
  const env = getDefaultEnvironment();
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith('RETICLE_') && value !== undefined) env[key] = value;
  }
  return env;
}
