import { test } from 'node:test';
import assert from 'node:assert/strict';
import { takeSnapshot } from '../src/dom/snapshot.js';
import { runQuery, runMatch } from '../src/dom/query.js';
import { runInspect } from '../src/commands/inspect.js';
import { pageContext } from '../test-support/helpers.js';

const HTML = `
  <header><nav aria-label="Main"><a href="/" data-testid="nav-home">Home</a><a href="/list">List</a></nav></header>
  <main>
    <h1>Sign in</h1>
    <form data-testid="login-form" aria-label="Login">
      <label for="user">Username</label><input id="user" data-testid="login-user" placeholder="ann">
      <label>Password <input type="password" data-testid="login-password" value="hunter2"></label>
      <button type="submit" data-testid="login-submit">Sign in</button>
      <button type="button" disabled>Disabled thing</button>
    </form>
    <p>Welcome to the <em>fixture</em> app</p>
    <img src="x.png" alt="Company logo">
    <div hidden><button>Hidden button</button></div>
    <div style="display:none"><button>Display none</button></div>
    <ul><li>Row one</li><li>Row two</li></ul>
    <div data-reticle-ui="badge"><button>SDK badge</button></div>
  </main>`;

test('full snapshot: nested outline with refs, states, values (passwords masked), hidden parts left out', async () => {
  const ctx = await pageContext(HTML);
  const { ok, result } = takeSnapshot(ctx, {});
  assert.equal(ok, true);
  const tree = result.tree;
  assert.match(tree, /^banner/m);
  assert.match(tree, /^ navigation "Main"/m);
  assert.match(tree, /heading "Sign in" e\d+ \[level=1\]/);
  assert.match(tree, /textbox "Username" e\d+ \[testid=login-user\]/);
  assert.match(tree, /textbox "Password" e\d+ \[value="•••••••"\]/);
  assert.match(tree, /button "Disabled thing" e\d+ \[disabled\]/);
  assert.match(tree, /paragraph "Welcome to the fixture app"/);
  assert.match(tree, /img "Company logo"/);
  assert.match(tree, /listitem "Row two"/);
  assert.doesNotMatch(tree, /Hidden button|Display none|SDK badge|hunter2/);
  assert.equal(result.status.title, 'Fixture');
  assert.equal(result.status.route, '/app?x=1');
  assert.equal(result.truncated, false);
});

test('a closed <details> shows its summary only', async () => {
  const ctx = await pageContext('<details><summary>More</summary><button>Inside</button></details>');
  const { result } = takeSnapshot(ctx, {});
  assert.match(result.tree, /button "More"/);
  assert.doesNotMatch(result.tree, /Inside/);
  ctx.doc.querySelector('details').open = true;
  assert.match(takeSnapshot(ctx, {}).result.tree, /button "Inside"/);
});

test('interactive snapshot is flat and lists controls only; status mode has no tree', async () => {
  const ctx = await pageContext(HTML);
  const { result } = takeSnapshot(ctx, { mode: 'interactive' });
  const lines = result.tree.split('\n');
  assert.ok(lines.every((l) => !l.startsWith(' ')), 'no indentation');
  assert.ok(lines.every((l) => /^(link|textbox|button) /.test(l)), result.tree);
  const status = takeSnapshot(ctx, { mode: 'status' });
  assert.equal(status.result.tree, '');
  assert.equal(takeSnapshot(ctx, { mode: 'everything' }).ok, false);
});

test('snapshot scope by css and by ref; a missing scope is a refusal', async () => {
  const ctx = await pageContext(HTML);
  const scoped = takeSnapshot(ctx, { scope: 'form' });
  assert.match(scoped.result.tree, /^form "Login"/);
  assert.doesNotMatch(scoped.result.tree, /navigation/);
  const q = runQuery(ctx, { testid: 'login-form' });
  const byRef = takeSnapshot(ctx, { scope: q.result.elements[0].ref });
  assert.equal(byRef.result.tree, scoped.result.tree);
  assert.match(takeSnapshot(ctx, { scope: '#nope' }).error, /matched nothing/);
  assert.match(takeSnapshot(ctx, { scope: '[[' }).error, /not a valid CSS selector/);
});

test('snapshot stops at 400 nodes and says so', async () => {
  const rows = Array.from({ length: 600 }, (_, i) => `<li><button>Row ${i}</button></li>`).join('');
  const ctx = await pageContext(`<ul>${rows}</ul>`);
  const { result } = takeSnapshot(ctx, { mode: 'interactive' });
  assert.equal(result.nodes, 400);
  assert.equal(result.truncated, true);
});

test('query by each criterion', async () => {
  const ctx = await pageContext(HTML);
  const one = (args) => {
    const r = runQuery(ctx, args);
    assert.equal(r.ok, true, JSON.stringify(r));
    return r.result.elements;
  };
  assert.equal(one({ role: 'button', name: 'Sign in' })[0].testid, 'login-submit');
  assert.equal(one({ text: 'Row two' }).length, 1, 'deepest element only');
  assert.equal(one({ text: 'Row two' })[0].tag, 'li');
  assert.equal(one({ label: 'Username' })[0].testid, 'login-user');
  assert.equal(one({ label: 'Password' })[0].testid, 'login-password');
  assert.equal(one({ placeholder: 'ann' })[0].testid, 'login-user');
  assert.equal(one({ testid: 'nav-home' })[0].role, 'link');
  assert.equal(one({ alt: 'logo' })[0].role, 'img');
  assert.equal(one({ css: 'form button' }).length, 2);
  assert.equal(one({ by: 'testid', value: 'login-submit' })[0].name, 'Sign in');
  const disabled = one({ role: 'button', name: 'Disabled thing' })[0];
  assert.deepEqual(disabled.states, ['disabled']);
  assert.equal(one({ text: 'Hidden button' })[0].visible, false);
  assert.equal(one({ name: 'SDK badge' }).length, 0, "the SDK's own UI is invisible to queries");
  assert.equal(one({ role: 'textbox', name: 'Password' })[0].value, '•••••••');
});

test('exact:false lists whole matches before partial ones; exact:true drops the partial ones', async () => {
  const ctx = await pageContext('<button>Save draft</button><button>Save</button>');
  const names = runQuery(ctx, { role: 'button', name: 'Save', exact: false }).result.elements.map((e) => e.name);
  assert.deepEqual(names, ['Save', 'Save draft']);
  assert.equal(runQuery(ctx, { role: 'button', name: 'Save', exact: true }).result.elements.length, 1);
});

test('a name matches whole and case-sensitively by default; a substring only with exact:false', async () => {
  const ctx = await pageContext('<button>Add todo</button><button>  Add\n </button><button>add</button><button>Cafe\u0301</button>');
  const names = (q) => runQuery(ctx, q).result.elements.map((e) => e.name);
  assert.deepEqual(names({ role: 'button', name: 'Add' }), ['Add']);
  assert.deepEqual(names({ role: 'button', name: ' Add ' }), ['Add'], 'whitespace is folded on both sides');
  assert.deepEqual(names({ role: 'button', name: 'add' }), ['add'], 'case counts');
  assert.deepEqual(names({ role: 'button', name: 'Add', exact: false }), ['Add', 'add', 'Add todo']);
  assert.deepEqual(names({ role: 'button', name: 'Café' }).length, 1, 'NFC on both sides');
  assert.deepEqual(names({ role: 'button', name: 'todo' }), []);
  const m = (query, state) => runMatch(ctx, { query, state }).result;
  assert.equal(m({ role: 'button', name: 'Add' }).count, 1);
  assert.equal(m({ role: 'button', name: 'Add', exact: false }).count, 3);
  assert.equal(m({ role: 'button' }, { name: 'Add' }).count, 1, "a state's name is whole too");
  assert.equal(m({ role: 'button', exact: false }, { name: 'Add' }).count, 3);
  assert.deepEqual(names({ text: 'todo' }), ['Add todo'], 'text still matches a substring by default');
  assert.deepEqual(names({ text: 'todo', exact: true }), []);
});

test('zero matches carry a hint; bad queries are refusals', async () => {
  const ctx = await pageContext(HTML);
  const none = runQuery(ctx, { testid: 'nope' });
  assert.equal(none.ok, true);
  assert.ok(none.result.hint.presentTestids.includes('login-form'));
  assert.ok(none.result.hint.presentRegions.some((r) => r.startsWith('navigation')));
  assert.match(runQuery(ctx, {}).error, /needs at least one/);
  assert.match(runQuery(ctx, { by: 'color', value: 'red' }).error, /unknown query 'by'/);
  assert.match(runQuery(ctx, { css: '[[' }).error, /not a valid CSS selector/);
  assert.match(runQuery(ctx, { role: 5 }).error, /must be a string/);
});

test('match checks a state over the query', async () => {
  const ctx = await pageContext(HTML);
  assert.equal(runMatch(ctx, { query: { role: 'button', name: 'Disabled thing' }, state: { enabled: false } }).result.matched, true);
  assert.equal(runMatch(ctx, { query: { role: 'button', name: 'Disabled thing' }, state: { enabled: true } }).result.matched, false);
  assert.equal(runMatch(ctx, { query: { role: 'listitem' }, state: { count: 2 } }).result.matched, true);
  const empty = runMatch(ctx, { query: { bogus: 1 } });
  assert.equal(empty.result.matched, false);
  assert.match(empty.result.reason, /needs at least one/);
  assert.match(runMatch(ctx, { query: { role: 'button' }, state: { shiny: true } }).error, /unknown keys shiny/);
  assert.equal(runMatch(ctx, {}).ok, false);
});

test('match lists the states each element is in and every state it reports', async () => {
  const ctx = await pageContext(`
    <button aria-pressed="true">Bold</button>
    <div role="tablist"><button role="tab" aria-selected="true">One</button><button role="tab" aria-selected="false">Two</button></div>
    <button aria-expanded="true">Menu</button>
    <label><input type="checkbox" checked> Subscribe</label>`);
  const bold = runMatch(ctx, { query: { role: 'button', name: 'Bold' } }).result;
  assert.ok(bold.elements[0].states.includes('pressed'));
  for (const state of ['checked', 'disabled', 'expanded', 'selected', 'pressed']) assert.ok(bold.statesReported.includes(state), state);
  const tabs = runMatch(ctx, { query: { role: 'tab' } }).result.elements;
  assert.deepEqual(tabs.map((e) => e.states.includes('selected')), [true, false]);
  assert.ok(runMatch(ctx, { query: { role: 'button', name: 'Menu' } }).result.elements[0].states.includes('expanded'));
  assert.ok(runMatch(ctx, { query: { role: 'checkbox' } }).result.elements[0].states.includes('checked'));
});

test('inspect describes an element; a stale ref is refused by name', async () => {
  const ctx = await pageContext(HTML);
  const [submit] = runQuery(ctx, { testid: 'login-submit' }).result.elements;
  const out = runInspect(ctx, { ref: submit.ref });
  assert.equal(out.ok, true);
  assert.equal(out.result.tag, 'button');
  assert.equal(out.result.formText, 'form "Login"');
  assert.ok('styles' in out.result && 'box' in out.result);
  ctx.doc.querySelector('[data-testid=login-submit]').remove();
  const stale = runInspect(ctx, { ref: submit.ref });
  assert.equal(stale.ok, false);
  assert.match(stale.error, new RegExp(`ref '${submit.ref}' is stale`));
});
