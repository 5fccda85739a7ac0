// test-support/mcp-sdk-client.mjs — a second, independent MCP client for the client gate
// (gates/tests/hop1_client_compat.rs): the official TypeScript SDK, @modelcontextprotocol/sdk, spawns
// the server through its StdioClientTransport as an agent built on it would (or, with --url,
// reaches the daemon's Streamable HTTP endpoint through its StreamableHTTPClientTransport),
// completes the handshake, lists the tools and calls reticle_sessions, then prints one JSON object
// saying what it saw (over HTTP, after ending its session with DELETE).
//
// Owns: driving one MCP session with the official SDK. Must not: judge the answers (the Rust gate
// does), or be imported by SDK code.
//
// Usage: node test-support/mcp-sdk-client.mjs <command> [args...]
//        node test-support/mcp-sdk-client.mjs --url http://127.0.0.1:<port>/mcp
// The transport passes the child only a few safe variables (HOME, PATH, ...); every RETICLE_*
// variable of this process is added, as a client config's `env` block would add it.
// Exit: 0 and {"ok":true,...} when every step answered; 1 and {"ok":false,"step","error"} when one
// failed; 2 for a bad command line.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { childEnvironment, print } from './mcp-sdk-spawn.mjs';

/** How long any one step may take before it counts as failed. */
const STEP_BOUND_MS = 30_000;

async function main(argv) {
  const [command, ...args] = argv;
  if (!command) {
    print({ ok: false, step: 'usage', error: 'usage: node mcp-sdk-client.mjs <command> [args...]' });
    return 2;
  }
  const http = command === '--url';
  const transport = http
    ? new StreamableHTTPClientTransport(new URL(args[0]))
    : new StdioClientTransport({ command, args, env: childEnvironment(), stderr: 'inherit' });
  // The client hands the negotiated version to transports that take it (the HTTP ones); it is
  // recorded here and passed on to the transport's own setter when it has one.
  let protocolVersion = null;
  const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (version) => {
    protocolVersion = version;
    setProtocolVersion?.(version);
  };
  const client = new Client({ name: 'reticle-client-gate', version: '1.0.0' });
  const options = { timeout: STEP_BOUND_MS };
  let step = 'initialize';
  try {
    await client.connect(transport, options);
    step = 'tools/list';
    const listed = await client.listTools(undefined, options);
    step = 'tools/call';
    const called = await client.callTool({ name: 'reticle_sessions', arguments: {} }, undefined, options);
    let session = null;
    if (http) {
      step = 'terminate';
      session = transport.sessionId ?? null;
      await transport.terminateSession();
    }
    print({
      ok: true,
      protocolVersion,
      server: client.getServerVersion() ?? null,
      capabilities: client.getServerCapabilities() ?? null,
      instructions: client.getInstructions() ?? null,
      tools: listed.tools.map((tool) => tool.name),
      call: { isError: called.isError === true, structuredContent: called.structuredContent ?? null },
      ...(http ? { session, terminated: transport.sessionId === undefined } : {}),
    });
    return 0;
  } catch (error) {
    print({ ok: false, step, error: String(error?.message ?? error) });
    return 1;
  } finally {
    await client.close().catch(() => {});
  }
}

process.exitCode = await main(process.argv.slice(2));
