// test-support/mcp-sdk-session.mjs — an agent's long MCP session for the first-day journey gate
// (gates/tests/journey_first_day.rs): the official TypeScript SDK, @modelcontextprotocol/sdk,
// spawns the server through its StdioClientTransport as an agent built on it would, completes
// the handshake, then calls the tools the test asks for, one request line at a time.
//
// Owns: carrying tool calls through one MCP session of the official SDK. Must not: judge the
// answers (the Rust gate does), or be imported by SDK code.
//
// Usage: node test-support/mcp-sdk-session.mjs <command> [args...]
// The first line printed is {"ready":true,"protocolVersion","server","instructions","tools"} (or
// {"ready":false,"error"}). Then each stdin line {"id","name","arguments"} is answered by one
// stdout line {"id","result"} (the CallToolResult) or {"id","error"}; a line
// {"id","list":true} is answered with the tool names. It ends when stdin closes. Every RETICLE_*
// variable of this process is passed to the server, as a client config's `env` block would.

import { createInterface } from 'node:readline';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { childEnvironment, print } from './mcp-sdk-spawn.mjs';

/** How long any one call may take before it counts as failed (a replay runs several steps). */
const CALL_BOUND_MS = 120_000;

async function main(argv) {
  const [command, ...args] = argv;
  if (!command) {
    print({ ready: false, error: 'usage: node mcp-sdk-session.mjs <command> [args...]' });
    return 2;
  }
  let protocolVersion = null;
  const transport = new StdioClientTransport({
    command,
    args,
    env: childEnvironment(),
    cwd: process.cwd(),
    stderr: 'inherit',
  });
  const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (version) => {
    protocolVersion = version;
    setProtocolVersion?.(version);
  };
  const client = new Client({ name: 'reticle-journey-gate', version: '1.0.0' });
  const options = { timeout: CALL_BOUND_MS };
  try {
    await client.connect(transport, options);
    const listed = await client.listTools(undefined, options);
    print({
      ready: true,
      protocolVersion,
      server: client.getServerVersion() ?? null,
      instructions: client.getInstructions() ?? null,
      tools: listed.tools.map((tool) => tool.name),
    });
  } catch (error) {
    print({ ready: false, error: String(error?.message ?? error) });
    await client.close().catch(() => {});
    return 1;
  }
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    let request;
    try {
      request = JSON.parse(line);
    } catch (error) {
      print({ id: null, error: `not JSON: ${error.message}` });
      continue;
    }
    try {
      if (request.list) {
        const listed = await client.listTools(undefined, options);
        print({ id: request.id, result: listed.tools.map((tool) => tool.name) });
      } else {
        const result = await client.callTool(
          { name: request.name, arguments: request.arguments ?? {} },
          undefined,
          options,
        );
        print({ id: request.id, result });
      }
    } catch (error) {
      print({ id: request.id, error: String(error?.message ?? error) });
    }
  }
  await client.close().catch(() => {});
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
