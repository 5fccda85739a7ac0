import { test } from 'node:test';
import assert from 'node:assert/strict';
import { boundBody, createBodyCapture, redactBody } from '../src/observers/bodies.js';
import { manualClock } from '../test-support/helpers.js';

test('redaction replaces the values of sensitive keys in JSON and form text, even one cut short', () => {
  assert.equal(redactBody('{"user":"ann","password":"hunter2","n":1}'), '{"user":"ann","password":"[REDACTED]","n":1}');
  assert.equal(redactBody('{"apiKey": 12345}'), '{"apiKey":"[REDACTED]"}');
  assert.equal(redactBody('user=ann&token=abc&x=1'), 'user=ann&token=[REDACTED]&x=1');
  assert.equal(redactBody('{"a":1,"secret":"half-of-the-val'), '{"a":1,"secret":"[REDACTED]');
  assert.equal(redactBody('plain words about a token'), 'plain words about a token');
});

test('a body is bounded and says when it was cut', () => {
  assert.deepEqual(boundBody('short'), { body: 'short', bodyTruncated: false });
  const cut = boundBody('y'.repeat(20000));
  assert.equal(cut.body.length, 16 * 1024);
  assert.equal(cut.bodyTruncated, true);
  assert.equal(boundBody('z', true).bodyTruncated, true);
});

test('capture is on only for the time asked, and never longer than the bound', () => {
  const clock = manualClock();
  const capture = createBodyCapture(clock);
  assert.equal(capture.wanted(), false);
  assert.equal(capture.captureFor(500), 500);
  assert.equal(capture.wanted(), true);
  clock.advance(500);
  assert.equal(capture.wanted(), false);
  assert.equal(capture.captureFor(10 * 60 * 1000), 2 * 60 * 1000);
});
