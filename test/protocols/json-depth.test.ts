/** The nesting bound of request bodies (issue 15): a byte scan before parsing, a walk before `stableJson`. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_JSON_DEPTH, jsonDeeperThan, stableJson, valueDeeperThan } from '../../src/protocols/shared.js';

/** `[[[...]]]`, `depth` levels, as JSON text. */
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

test('the depth scan: brackets inside strings do not count, escapes are followed', () => {
  assert.ok(jsonDeeperThan(nested(3), 2));
  assert.not.ok(jsonDeeperThan(nested(3), 3));
  assert.not.ok(jsonDeeperThan('["[[[[[[", "\\"[[[["]', 1));
  assert.ok(jsonDeeperThan(Buffer.from('{"a":"\\\\","b":[[1]]}'), 2), 'an escaped backslash ends before the quote');
  assert.not.ok(jsonDeeperThan(Buffer.from(JSON.stringify({ a: { b: [{ c: 'x]]]' }] } })), 4));
  assert.ok(valueDeeperThan(JSON.parse(nested(MAX_JSON_DEPTH + 1)), MAX_JSON_DEPTH));
  assert.not.ok(valueDeeperThan(JSON.parse(nested(MAX_JSON_DEPTH)), MAX_JSON_DEPTH));
  assert.throws(() => stableJson(JSON.parse(nested(100_000))), /nested deeper than/);
});

test.run();
