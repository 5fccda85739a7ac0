// app.js — the fixture app's behaviour: one function, `startApp(win, reticle)`.
//
// Owns: wiring every control of index.html to something an observer or a command can see:
// a login POST (network, signals, store), a history-API route change, a registered store,
// signals, console output and uncaught errors, element states (a disclosure, a pressed toggle,
// tabs, a control that disables another), a one-shot CSS animation, a fetch whose body holds a
// known word, a re-rendering element (stale refs), a destructive button, a page timer (clock),
// 200 rows in a scroll container, the config handed to the sandboxed iframe, and, with
// `sameOriginFrame=1`, a same-origin iframe loading the SDK (it shares this tab's sessionStorage,
// so it claims this page's session id), and, with `variant=`, a sign-in button changed as a later
// release might change it (renamed, broken, twinned: API.md),
// and, with `stuckCounter=1`, a broken build whose Increment button does nothing (a regression
// for `reticle verify` to catch).
// Must not: reach for globals; everything goes through `win` (so tests can run it in jsdom)
// and the SDK module passed in as `reticle`. Sets `win.__reticleStatus()` (the SDK's status) for the harness.

import { connectOptions, readReticleConfig } from './config.js';

export const ROW_COUNT = 200;
export const TIMER_MS = 5000;

export function startApp(win, reticle) {
  const doc = win.document;
  const byTestid = (id) => doc.querySelector(`[data-testid="${id}"]`);
  const config = readReticleConfig(win.location.search);

  const state = {
    user: null,
    counter: 0,
    view: 'home',
    items: ['alpha', 'beta', 'gamma'],
    lastLogin: null,
    renders: 1,
    targetClicks: 0,
    settings: { theme: 'light', notifications: { email: true, sms: false } },
  };

  // --- SDK -------------------------------------------------------------------------------
  const sdkStatus = byTestid('sdk-status');
  let connection = { ok: false, reason: 'no reticlePort in the page URL' };
  if (config.port !== null) connection = reticle.connect(connectOptions(config));
  sdkStatus.textContent = connection.ok ? `SDK connected as ${connection.sessionId}` : `SDK not connected: ${connection.reason}`;
  reticle.registerStore('app', () => state);
  win.__reticleStatus = () => reticle.status(); // for the harness: the session this document is connected as

  // --- route (history API) -----------------------------------------------------------------
  const VIEWS = {
    home: { title: 'Home', body: 'This is the home view.' },
    details: { title: 'Details', body: 'This is the details view.' },
  };
  function urlForView(view) {
    const url = new win.URL(win.location.href);
    url.searchParams.set('view', view);
    url.hash = '';
    return `${url.pathname}${url.search}`;
  }
  function renderView() {
    const view = new win.URLSearchParams(win.location.search).get('view');
    state.view = VIEWS[view] ? view : 'home';
    byTestid('view-title').textContent = VIEWS[state.view].title;
    byTestid('view-body').textContent = VIEWS[state.view].body;
    for (const link of doc.querySelectorAll('nav a[data-route]')) {
      if (link.dataset.route === state.view) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
  }
  for (const link of doc.querySelectorAll('nav a[data-route]')) {
    link.setAttribute('href', urlForView(link.dataset.route)); // keeps reticlePort & co. on reload
    link.addEventListener('click', (ev) => {
      ev.preventDefault();
      win.history.pushState({ view: link.dataset.route }, '', urlForView(link.dataset.route));
      renderView();
      reticle.signal('route.rendered', { view: state.view });
    });
  }
  win.addEventListener('popstate', renderView);
  renderView();

  // --- login -------------------------------------------------------------------------------
  const form = byTestid('login-form');
  const loginStatus = byTestid('login-status');
  const loginError = byTestid('login-error');
  const submit = byTestid('login-submit');
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const user = byTestid('login-user').value;
    const password = byTestid('login-password').value;
    loginError.hidden = true;
    loginStatus.textContent = 'Signing in…';
    submit.disabled = true;
    reticle.signal('login.submitted', { user });
    try {
      const res = await win.fetch('/api/login', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ user, password }),
      });
      const body = await res.json().catch(() => ({}));
      state.lastLogin = { status: res.status, ok: res.ok };
      if (res.ok && body.ok) {
        state.user = body.user;
        loginStatus.textContent = `Signed in as ${body.user}`;
        reticle.signal('login.succeeded', { user: body.user });
      } else {
        loginStatus.textContent = '';
        loginError.textContent = `Sign-in failed (HTTP ${res.status})`;
        loginError.hidden = false;
        reticle.signal('login.failed', { status: res.status });
      }
    } catch (err) {
      state.lastLogin = { status: 0, ok: false };
      loginStatus.textContent = '';
      loginError.textContent = `Sign-in failed (${err && err.message ? err.message : 'network error'})`;
      loginError.hidden = false;
      reticle.signal('login.failed', { status: 0 });
    } finally {
      submit.disabled = false;
    }
  });

  // --- variants: `variant=` in the page URL changes the sign-in button as a later release might --
  // renamed: its testid is login-submit-v2; broken: renamed, and it no longer submits the form;
  // twin: renamed, and a second "Sign in" button (login-submit-v3) stands next to it.
  const variant = new win.URLSearchParams(win.location.search).get('variant');
  if (['renamed', 'broken', 'twin'].includes(variant)) submit.setAttribute('data-testid', 'login-submit-v2');
  if (variant === 'broken') submit.type = 'button';
  if (variant === 'twin') {
    const twin = submit.cloneNode(true);
    twin.setAttribute('data-testid', 'login-submit-v3');
    submit.after(twin);
  }

  // --- console and errors ---------------------------------------------------------------------
  byTestid('log-error').addEventListener('click', () => win.console.error('fixture: deliberate console error'));
  byTestid('log-info').addEventListener('click', () => win.console.log('fixture: a console message'));
  byTestid('throw-uncaught').addEventListener('click', () => {
    win.setTimeout(() => {
      throw new Error('fixture: deliberate uncaught error');
    }, 0);
  });
  byTestid('reject-promise').addEventListener('click', () => {
    win.Promise.reject(new Error('fixture: deliberate unhandled rejection'));
  });

  // --- store, signals, XHR ----------------------------------------------------------------------
  byTestid('counter-increment').addEventListener('click', () => {
    if (config.stuckCounter) return;
    state.counter += 1;
    byTestid('counter-value').textContent = `Count: ${state.counter}`;
    reticle.signal('counter.changed', { value: state.counter });
  });
  let pings = 0;
  byTestid('send-signal').addEventListener('click', () => {
    pings += 1;
    reticle.signal('fixture.ping', { n: pings });
  });
  byTestid('health-xhr').addEventListener('click', () => {
    const xhr = new win.XMLHttpRequest();
    xhr.open('GET', '/api/health');
    xhr.addEventListener('loadend', () => {
      byTestid('health-status').textContent = `Health: ${xhr.status}`;
    });
    xhr.send();
  });

  // --- controls ----------------------------------------------------------------------------------
  const tooltip = byTestid('hover-tooltip');
  byTestid('hover-target').addEventListener('mouseenter', () => {
    tooltip.hidden = false;
  });
  byTestid('hover-target').addEventListener('mouseleave', () => {
    tooltip.hidden = true;
  });
  byTestid('dblclick-target').addEventListener('dblclick', (ev) => {
    ev.currentTarget.textContent = 'Double-clicked';
  });
  const dialog = byTestid('dialog');
  byTestid('open-dialog').addEventListener('click', () => {
    if (typeof dialog.showModal === 'function') dialog.showModal();
    else dialog.setAttribute('open', '');
  });
  byTestid('close-dialog').addEventListener('click', () => {
    if (typeof dialog.close === 'function') dialog.close();
    else dialog.removeAttribute('open');
  });

  // --- states and motion ---------------------------------------------------------------------------
  const flip = (el, attr) => el.setAttribute(attr, String(el.getAttribute(attr) !== 'true'));
  const disclosure = byTestid('disclosure-toggle');
  disclosure.addEventListener('click', () => {
    flip(disclosure, 'aria-expanded');
    byTestid('disclosure-panel').hidden = disclosure.getAttribute('aria-expanded') !== 'true';
  });
  byTestid('bold-toggle').addEventListener('click', (ev) => flip(ev.currentTarget, 'aria-pressed'));
  const tabs = [byTestid('tab-one'), byTestid('tab-two')];
  for (const tab of tabs) {
    tab.addEventListener('click', () => {
      for (const other of tabs) other.setAttribute('aria-selected', String(other === tab));
    });
  }
  byTestid('lock-toggle').addEventListener('click', () => {
    const target = byTestid('locked-target');
    target.disabled = !target.disabled;
  });
  const animBox = byTestid('anim-box');
  byTestid('animate-start').addEventListener('click', () => {
    animBox.classList.remove('pulsing');
    void animBox.offsetWidth; // restart the animation on a repeated click
    animBox.classList.add('pulsing');
  });
  animBox.addEventListener('animationend', () => animBox.classList.remove('pulsing'));
  byTestid('quote-fetch').addEventListener('click', async () => {
    const res = await win.fetch('/api/quote');
    const body = await res.json().catch(() => ({}));
    byTestid('quote-text').textContent = body.quote ? `Quote: ${body.quote}` : 'No quote';
  });

  // --- re-render: a new element each time, same testid and text shape --------------------------------
  const slot = byTestid('rerender-slot');
  function renderTarget() {
    const button = doc.createElement('button');
    button.type = 'button';
    button.dataset.testid = 'rerender-target';
    button.textContent = `Target (render ${state.renders})`;
    button.addEventListener('click', () => {
      state.targetClicks += 1;
      byTestid('rerender-clicks').textContent = `Target clicks: ${state.targetClicks}`;
    });
    slot.replaceChildren(button);
  }
  byTestid('rerender').addEventListener('click', () => {
    state.renders += 1;
    renderTarget();
  });
  renderTarget();

  // --- a destructive action ------------------------------------------------------------------------
  const itemList = byTestid('item-list');
  function renderItems() {
    itemList.replaceChildren(
      ...state.items.map((name) => {
        const li = doc.createElement('li');
        li.dataset.testid = `item-${name}`;
        li.textContent = name;
        return li;
      }),
    );
  }
  byTestid('delete-item').addEventListener('click', () => {
    const removed = state.items.pop();
    renderItems();
    reticle.signal('item.deleted', { name: removed ?? null, left: state.items.length });
  });
  renderItems();

  // --- the page clock -----------------------------------------------------------------------------
  byTestid('timer-start').addEventListener('click', () => {
    byTestid('timer-status').textContent = 'Timer running';
    win.setTimeout(() => {
      byTestid('timer-status').textContent = 'Timer fired';
      reticle.signal('timer.fired', {});
    }, TIMER_MS);
  });
  byTestid('clock-read').addEventListener('click', () => {
    byTestid('clock-now').textContent = new win.Date().toISOString();
  });

  // --- 200 rows in a scroll container ------------------------------------------------------------------
  const rows = byTestid('row-list');
  const fragment = doc.createDocumentFragment();
  for (let i = 1; i <= ROW_COUNT; i += 1) {
    const li = doc.createElement('li');
    li.id = `row-${i}`;
    li.dataset.testid = `row-${i}`;
    li.textContent = `Row ${i}`;
    fragment.append(li);
  }
  rows.append(fragment);

  // --- the sandboxed iframe gets its daemon config by message (its opaque origin has no storage) ------------
  const frame = byTestid('sandboxed-frame');
  const frameConfig = { reticlePort: config.port, reticleToken: config.token, session: config.session ? `${config.session}-frame` : undefined };
  const sendFrameConfig = () => {
    if (frame.contentWindow && config.port !== null) frame.contentWindow.postMessage({ type: 'reticle-config', ...frameConfig }, '*');
  };
  frame.addEventListener('load', sendFrameConfig);
  sendFrameConfig(); // in case the frame finished loading before this module ran
  win.addEventListener('message', (ev) => {
    if (ev.source === frame.contentWindow && ev.data && ev.data.type === 'reticle-config-request') sendFrameConfig();
  });

  // --- a same-origin frame loading the SDK, added after connect() stored the session id ----------
  if (config.sameOriginFrame && config.port !== null) {
    const inner = doc.createElement('iframe');
    const token = config.token ? `&reticleToken=${encodeURIComponent(config.token)}` : '';
    inner.src = `/iframe.html?reticlePort=${config.port}${token}`;
    inner.title = 'Same-origin frame';
    inner.dataset.testid = 'same-origin-frame';
    byTestid('frame-section').append(inner);
  }

  return { state, connection };
}
