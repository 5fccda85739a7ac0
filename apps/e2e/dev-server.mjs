// dev-server.mjs — a small Node implementation of the HTTP contract in API.md.
//
// Owns: serving apps/e2e at / and sdk/ at /sdk/, plus /api/health, /api/quote, /api/login and /api/fault,
// exactly as API.md states them. The SDK's tests use it to run the fixture app against the
// contract, and a developer can use it by hand:  node apps/e2e/dev-server.mjs [port]
// Must not: grow beyond API.md. The gates use the Rust `FixtureApp`; this is its executable spec.

import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const APP_ROOT = resolve(HERE);
const SDK_ROOT = resolve(HERE, '../../sdk');
const MAX_BODY = 64 * 1024;
const MAX_DELAY_MS = 60_000;

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.md': 'text/markdown; charset=utf-8',
};

function send(res, status, body, type = 'application/json') {
  res.writeHead(status, {
    'content-type': type,
    'cache-control': 'no-store',
    'access-control-allow-origin': '*',
  });
  res.end(typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body));
}

function readJson(req) {
  return new Promise((resolvePromise) => {
    let size = 0;
    const chunks = [];
    req.on('data', (c) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
    });
    req.on('end', () => {
      if (size > MAX_BODY) return resolvePromise({ ok: false, error: 'body too large' });
      try {
        resolvePromise({ ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      } catch {
        resolvePromise({ ok: false, error: 'body is not JSON' });
      }
    });
  });
}

async function serveFile(res, root, relative) {
  const target = normalize(join(root, relative));
  if (target !== root && !target.startsWith(root + sep)) return send(res, 404, { ok: false, error: 'not found' });
  if (target.split(sep).includes('node_modules')) return send(res, 404, { ok: false, error: 'not found' });
  try {
    const info = await stat(target);
    const file = info.isDirectory() ? join(target, 'index.html') : target;
    const body = await readFile(file);
    return send(res, 200, body, TYPES[extname(file)] || 'application/octet-stream');
  } catch {
    return send(res, 404, { ok: false, error: 'not found' });
  }
}

export async function startFixtureServer({ port = 0, host = '127.0.0.1' } = {}) {
  let fault = { mode: 'ok', delayMs: 0 };
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://fixture');
    const path = url.pathname;
    if (path === '/api/health') {
      return req.method === 'GET' ? send(res, 200, { ok: true }) : send(res, 405, { ok: false, error: 'use GET' });
    }
    if (path === '/api/quote') {
      return req.method === 'GET' ? send(res, 200, { ok: true, quote: 'serendipity', token: 'fixture-secret' }) : send(res, 405, { ok: false, error: 'use GET' });
    }
    if (path === '/api/login') {
      if (req.method !== 'POST') return send(res, 405, { ok: false, error: 'use POST' });
      const body = await readJson(req);
      if (!body.ok || typeof body.value?.user !== 'string' || body.value.user === '' || typeof body.value.password !== 'string') {
        return send(res, 400, { ok: false, error: 'send JSON {"user": "<non-empty>", "password": "<string>"}' });
      }
      if (fault.mode === 'error') return send(res, 500, { ok: false, error: 'injected fault' });
      if (fault.mode === 'slow') await new Promise((r) => setTimeout(r, fault.delayMs));
      return send(res, 200, { ok: true, user: body.value.user });
    }
    if (path === '/api/fault') {
      if (req.method !== 'POST') return send(res, 405, { ok: false, error: 'use POST' });
      const body = await readJson(req);
      const mode = body.ok ? body.value?.mode : undefined;
      const delayMs = body.ok && body.value?.delayMs !== undefined ? body.value.delayMs : 0;
      if (!['ok', 'error', 'slow'].includes(mode) || !Number.isInteger(delayMs) || delayMs < 0 || delayMs > MAX_DELAY_MS) {
        return send(res, 400, { ok: false, error: `send JSON {"mode": "ok"|"error"|"slow", "delayMs": 0..${MAX_DELAY_MS}}` });
      }
      fault = { mode, delayMs };
      return send(res, 200, { ok: true, mode, delayMs });
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, { ok: false, error: 'static files are GET only' });
    if (path === '/sdk' || path.startsWith('/sdk/')) return serveFile(res, SDK_ROOT, decodeURIComponent(path.slice('/sdk'.length)) || '/');
    return serveFile(res, APP_ROOT, decodeURIComponent(path));
  });
  await new Promise((r) => server.listen(port, host, r));
  const address = server.address();
  return {
    port: address.port,
    origin: `http://${host}:${address.port}`,
    close: () => new Promise((r) => server.close(r)),
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const port = Number(process.argv[2] || 0);
  startFixtureServer({ port }).then((s) => {
    process.stdout.write(`fixture app at ${s.origin}/?reticlePort=<daemon port>&reticleToken=<token>&session=<id>\n`);
  });
}
