// The SDK's visibility check timed inside the fixture page: the app served by
// apps/e2e/dev-server.mjs, Debian's Chromium headless with a DevTools port, and one evaluation
// that imports sdk/src/dom/{roles,describe}.js from the app and times `isVisible` and
// `describeElement` on the sign-in button (50,000 calls each) and `isVisible` over every element
// of the page (100 rounds), with performance.now(). It measures; it asserts nothing. To compare
// with another SDK, check that SDK's roles.js out and run again (interleave the runs).
// Usage: node --experimental-websocket scripts/sdk_visibility_timing.mjs <app port> <devtools port>
// (ports: free, below 32768).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const [appPort, devtoolsPort] = process.argv.slice(2);
const root = fileURLToPath(new URL('..', import.meta.url));
const profile = mkdtempSync(join(tmpdir(), 'sdk-timing-'));
const app = spawn('node', [join(root, 'apps/e2e/dev-server.mjs'), appPort], { stdio: 'ignore' });
const chrome = spawn('/usr/bin/chromium', ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync', `--user-data-dir=${profile}`,
  `--remote-debugging-port=${devtoolsPort}`, 'about:blank'], { stdio: 'ignore', env: { ...process.env, TMPDIR: profile } });
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what, probe) {
  for (let tries = 0; tries < 300; tries++) {
    try {
      const value = await probe();
      if (value) return value;
    } catch {}
    await pause(100);
  }
  throw new Error(`${what} within 30 s`);
}

const target = await until('a page target', async () => {
  const targets = await (await fetch(`http://127.0.0.1:${devtoolsPort}/json/list`)).json();
  return targets.find((t) => t.type === 'page');
});
await until('the app', async () => (await fetch(`http://127.0.0.1:${appPort}/`)).ok);
const socket = new WebSocket(target.webSocketDebuggerUrl);
await new Promise((resolve) => { socket.onopen = resolve; });
let nextId = 0;
const waiting = new Map();
socket.onmessage = (event) => {
  const message = JSON.parse(event.data);
  if (waiting.has(message.id)) waiting.get(message.id)(message);
};
const send = (method, params) => new Promise((resolve) => {
  const id = ++nextId;
  waiting.set(id, resolve);
  socket.send(JSON.stringify({ id, method, params }));
});
await send('Page.enable', {});
await send('Page.navigate', { url: `http://127.0.0.1:${appPort}/` });
await until('the page, its rows rendered', async () => (await send('Runtime.evaluate', {
  expression: 'Boolean(document.querySelector(\'[data-testid="row-200"]\'))', returnByValue: true,
})).result.result.value);
const timing = `(async () => {
  const roles = await import('/sdk/src/dom/roles.js');
  const describe = await import('/sdk/src/dom/describe.js');
  const button = document.querySelector('[data-testid="login-submit"]');
  const refs = { refFor: () => 'e1' };
  const perCall = (n, f) => { const t0 = performance.now(); for (let i = 0; i < n; i++) f(); return (performance.now() - t0) * 1000 / n; };
  const all = [...document.querySelectorAll('body *')];
  return {
    isVisibleOnTheButtonUs: perCall(50000, () => roles.isVisible(button, true)).toFixed(2),
    describeElementOnTheButtonUs: perCall(50000, () => describe.describeElement(button, refs, true)).toFixed(2),
    isVisiblePerElementUs: (perCall(100, () => all.forEach((el) => roles.isVisible(el, true))) / all.length).toFixed(2),
    elements: all.length,
  };
})()`;
const answer = await send('Runtime.evaluate', { expression: timing, awaitPromise: true, returnByValue: true });
console.log(JSON.stringify(answer.result.result.value ?? answer.result));
socket.close();
chrome.kill('SIGKILL');
app.kill();
await pause(200);
rmSync(profile, { recursive: true, force: true });
