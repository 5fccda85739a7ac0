// Narrowed and cached query candidates (dom/candidates.js): the same answers as looking at every
// element, and never a list the DOM has moved on from.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { candidateSelector, cssString, MAX_CACHED_SELECTORS } from '../src/dom/candidates.js';
import { runQuery } from '../src/dom/query.js';
import { isOwnUi, isSkippedTag, roleOf, testidOf } from '../src/dom/roles.js';
import { takeSnapshot } from '../src/dom/snapshot.js';
import { pageContext } from '../test-support/helpers.js';

/** Every implicit-role branch of roles.js, explicit roles (odd spellings too) and the SDK's own UI. */
const VARIETY = `
  <header data-testid="top"><a href="/">Home</a><a>No href</a><map><area href="/x" alt="x"><area alt="y"></map></header>
  <article><header>Article header</header><footer>Article footer</footer></article>
  <footer>Page footer</footer>
  <main>
    <section>Plain section</section><section aria-label="Named">Named section</section>
    <section aria-labelledby="h">Labelled section</section><h1 id="h">One</h1><h2>Two</h2><h6>Six</h6>
    <form><fieldset><legend>Legend</legend>
      <input><input type="button" value="Go"><input type="submit"><input type="reset"><input type="image" alt="Img">
      <input type="checkbox"><input type="radio"><input type="range"><input type="number"><input type="search">
      <input type="search" list="l"><input type="email" list="l"><input type="hidden"><input type="TEXT">
      <select><option>A</option></select><select multiple><option>B</option></select><select size="3"></select>
      <textarea></textarea><button>Press</button><progress></progress><output>Out</output><meter></meter>
    </fieldset></form>
    <ul><li>Item</li></ul><ol><li>Item 2</li></ol><menu><li>Item 3</li></menu>
    <table><caption>Cap</caption><tr><th>Col</th><th scope="row">Row</th><td>Cell</td></tr></table>
    <img src="a.png" alt="Alt"><img src="b.png" alt=""><img src="c.png">
    <dialog open>Dialog</dialog><p>Para</p><label>Label</label><aside>Aside</aside><nav>Nav</nav>
    <details><summary>More</summary>Inside</details><hr><iframe title="f"></iframe>
    <div role="button">Div button</div><span role="BUTTON">Upper</span><div role=" link  button ">Two roles</div>
    <div role="none">None</div><div role="presentation">Pres</div><div role="">Empty role</div>
    <div role="  ">Blank role</div><button role="link">Button as link</button><span role="switch">Sw</span>
    <svg><a href="/svg"><text>Svg link</text></a></svg><custom-thing>Custom</custom-thing><div>Div</div>
    <div data-reticle-ui="badge"><button>SDK badge</button><div role="button">SDK div</div></div>
  </main>`;

const ROLES = [
  'button', 'link', 'generic', 'banner', 'contentinfo', 'region', 'heading', 'textbox', 'searchbox', 'combobox',
  'listbox', 'checkbox', 'radio', 'slider', 'spinbutton', 'none', 'presentation', 'img', 'option', 'list',
  'listitem', 'table', 'row', 'cell', 'columnheader', 'rowheader', 'group', 'legend', 'progressbar', 'status',
  'dialog', 'paragraph', 'label', 'complementary', 'navigation', 'main', 'form', 'separator', 'iframe', 'article',
  'switch', 'BUTTON', '  Button ', 'meter', 'nonexistent', '',
];

const refsOf = (r) => r.result.elements.map((e) => e.ref);

test('a role query answers exactly what checking every element answers, in document order', async () => {
  const ctx = await pageContext(VARIETY);
  for (const role of ROLES) {
    const wanted = role.trim().toLowerCase();
    const everyElement = Array.from(ctx.doc.documentElement.querySelectorAll('*')).filter(
      (el) => roleOf(el) === wanted && !isSkippedTag(el) && !isOwnUi(el),
    );
    const got = runQuery(ctx, { role, limit: 500 });
    assert.equal(got.ok, true);
    assert.deepEqual(refsOf(got), everyElement.map((el) => ctx.refs.refFor(el)), `role '${role}'`);
  }
});

test('the narrowed candidates of a role include every element that can have it', async () => {
  const ctx = await pageContext(VARIETY);
  for (const el of ctx.doc.documentElement.querySelectorAll('*')) {
    const role = roleOf(el);
    const selector = candidateSelector({ role });
    assert.ok(selector === '*' || el.matches(selector), `<${el.tagName.toLowerCase()}> with role '${role}' must match '${selector}'`);
  }
  assert.equal(candidateSelector({ role: 'generic' }), '*', 'any tag can be generic');
  assert.equal(candidateSelector({ name: 'x' }), '*');
});

test('testids with characters CSS treats specially are found, and only by their exact value', async () => {
  const ids = ['plain', 'with "quotes"', 'back\\slash', 'line\nbreak', 'a]b,c:d', '1st', 'émoji 😀', ' spaced ', 'a\0b', 'lone \uD800', '\uDC00x'];
  const html = ids.map((id, i) => `<button id="b${i}">B${i}</button>`).join('') + '<span data-testid="with">w</span>';
  const ctx = await pageContext(html);
  ids.forEach((id, i) => ctx.doc.getElementById(`b${i}`).setAttribute('data-testid', id));
  for (const [i, id] of ids.entries()) {
    const got = runQuery(ctx, { testid: id });
    assert.equal(got.result.count, 1, JSON.stringify(id));
    assert.equal(got.result.elements[0].ref, ctx.refs.refFor(ctx.doc.getElementById(`b${i}`)));
  }
  assert.equal(runQuery(ctx, { testid: 'with' }).result.count, 1, 'a prefix of a testid is another testid');
  assert.equal(cssString('a\0b'), null, 'NUL cannot be written in a CSS string');
  assert.equal(cssString('x\uD800'), null, 'nor can a lone surrogate');
  assert.equal(cssString('a"b'), '"a\\22 b"');
});

test('the three testid attributes are read in order: the first non-empty one is the testid', async () => {
  const ctx = await pageContext(`
    <button id="a" data-testid="one" data-test="two">A</button>
    <button id="b" data-testid="" data-test-id="two">B</button>
    <button id="c" data-test="two">C</button>`);
  const got = runQuery(ctx, { testid: 'two' });
  assert.deepEqual(refsOf(got), ['b', 'c'].map((id) => ctx.refs.refFor(ctx.doc.getElementById(id))));
  assert.equal(testidOf(ctx.doc.getElementById('a')), 'one');
  assert.equal(runQuery(ctx, { testid: '' }).result.count, 0, 'an empty testid names nothing');
});

test('a query after a mutation sees the new DOM: added, removed, moved, re-attributed, in the same task', async () => {
  const ctx = await pageContext('<div id="list"><button data-testid="item">One</button></div><div id="other"></div>');
  const list = ctx.doc.getElementById('list');
  const first = runQuery(ctx, { testid: 'item' });
  assert.equal(first.result.count, 1);
  const oneRef = first.result.elements[0].ref;

  const two = ctx.doc.createElement('button');
  two.setAttribute('data-testid', 'item');
  two.textContent = 'Two';
  list.prepend(two); // no await: the observer's records are still pending
  assert.deepEqual(runQuery(ctx, { testid: 'item' }).result.elements.map((e) => e.name), ['Two', 'One']);

  ctx.doc.getElementById('other').append(two); // moved after One
  assert.deepEqual(runQuery(ctx, { testid: 'item' }).result.elements.map((e) => e.name), ['One', 'Two']);

  two.setAttribute('data-testid', 'renamed');
  assert.deepEqual(runQuery(ctx, { testid: 'item' }).result.elements.map((e) => e.name), ['One']);
  assert.deepEqual(runQuery(ctx, { testid: 'renamed' }).result.elements.map((e) => e.name), ['Two']);

  list.replaceChildren(); // One is gone; its ref is stale, never answered for
  await Promise.resolve(); // this time the observer's callback gets the records
  assert.equal(runQuery(ctx, { testid: 'item' }).result.count, 0);
  assert.equal(ctx.refs.resolve(oneRef).ok, false);
  assert.equal(ctx.refs.resolve(oneRef).stale, true);
  list.innerHTML = '<button data-testid="item">One again</button>';
  const again = runQuery(ctx, { testid: 'item' }).result.elements;
  assert.deepEqual(again.map((e) => e.name), ['One again']);
  assert.notEqual(again[0].ref, oneRef, 'a new element never gets an old ref');
});

test('role changes, and everything a role query checks per element, are seen at once', async () => {
  const ctx = await pageContext('<div id="d">Div</div><button id="b">Save</button><input id="i" type="button" value="Send">');
  const names = (args) => runQuery(ctx, args).result.elements.map((e) => e.name);
  assert.deepEqual(names({ role: 'button' }), ['Save', 'Send']);
  ctx.doc.getElementById('d').setAttribute('role', 'button');
  assert.deepEqual(names({ role: 'button' }), ['Div', 'Save', 'Send']);
  ctx.doc.getElementById('b').setAttribute('role', 'link');
  assert.deepEqual(names({ role: 'button' }), ['Div', 'Send']);
  ctx.doc.getElementById('b').removeAttribute('role');
  ctx.doc.getElementById('b').textContent = 'Save all'; // text: not a candidate change, a name change
  assert.deepEqual(names({ role: 'button', name: 'Save all' }), ['Save all']);
  ctx.doc.getElementById('i').value = 'Post'; // a property, no mutation at all
  assert.deepEqual(names({ role: 'button', name: 'Post' }), ['Post']);
  ctx.doc.getElementById('b').setAttribute('aria-label', 'Keep');
  assert.deepEqual(names({ role: 'button', name: 'Keep' }), ['Keep']);
  ctx.doc.getElementById('b').hidden = true;
  assert.equal(runQuery(ctx, { role: 'button', name: 'Keep' }).result.elements[0].visible, false);
});

test('a scoped query inside a shadow tree sees that tree change (scoped lists are never kept)', async () => {
  const ctx = await pageContext('<div id="host"></div>');
  const shadow = ctx.doc.getElementById('host').attachShadow({ mode: 'open' });
  shadow.innerHTML = '<div id="panel"><button data-testid="in-shadow">First</button></div>';
  const shadowButton = takeSnapshot(ctx, {}).result.tree.match(/button "First" (e\d+)/);
  assert.ok(shadowButton, 'the snapshot reaches into the open shadow root');
  const panel = shadow.getElementById('panel');
  const scope = ctx.refs.refFor(panel);
  assert.equal(runQuery(ctx, { testid: 'in-shadow', scope }).result.count, 1);
  panel.insertAdjacentHTML('beforeend', '<button data-testid="in-shadow">Second</button>');
  await Promise.resolve();
  assert.equal(runQuery(ctx, { testid: 'in-shadow', scope }).result.count, 2);
});

test('many distinct queries stay correct past the number of lists kept', async () => {
  const count = MAX_CACHED_SELECTORS + 10;
  const ctx = await pageContext(Array.from({ length: count }, (_, i) => `<button data-testid="t${i}">B${i}</button>`).join(''));
  for (let round = 0; round < 2; round += 1) {
    for (let i = 0; i < count; i += 1) assert.equal(runQuery(ctx, { testid: `t${i}` }).result.elements[0].name, `B${i}`);
  }
  ctx.doc.querySelector('[data-testid=t3]').remove();
  assert.equal(runQuery(ctx, { testid: 't3' }).result.count, 0);
});
