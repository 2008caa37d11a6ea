import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EngramError } from '../../src/errors.js';
import { readJsonRecords } from '../../src/transcripts/json-records.js';

const test = suite('reading uploaded transcripts as JSON records');

/** The body cut into pieces of `size` bytes, as a socket delivers it. */
async function* pieces(text: string | Buffer, size = 7): AsyncGenerator<Buffer> {
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text);
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

async function read(text: string | Buffer, size = 7, maxBytes = 1 << 20, maxLineBytes?: number) {
  const records: unknown[] = [];
  const summary = await readJsonRecords(pieces(text, size), (record) => records.push(record), { maxBytes, maxLineBytes });
  return { records, summary };
}

async function refused(text: string | Buffer, options: { maxBytes?: number } = {}): Promise<EngramError> {
  try {
    await read(text, 7, options.maxBytes);
  } catch (error) {
    assert.instance(error, EngramError);
    return error as EngramError;
  }
  throw new Error('expected a refusal');
}

test('JSON lines across piece boundaries, CRLF and blank lines', async () => {
  for (const size of [1, 3, 7, 64, 4096]) {
    const { records, summary } = await read('{"a":1}\r\n\n{"b":"é 𝄞"}\n  \n{"c":[1,2]}\n', size);
    assert.equal(records, [{ a: 1 }, { b: 'é 𝄞' }, { c: [1, 2] }], `pieces of ${size}`);
    assert.is(summary.skipped, 0);
    assert.is(summary.truncatedTail, false);
    assert.is(summary.document, false);
  }
});

test('a last line without newline is used when whole, left out when cut short', async () => {
  const whole = await read('{"a":1}\n{"b":2}');
  assert.equal(whole.records, [{ a: 1 }, { b: 2 }]);
  assert.is(whole.summary.truncatedTail, false);
  const cut = await read('{"a":1}\n{"b":2}\n{"c":"half');
  assert.equal(cut.records, [{ a: 1 }, { b: 2 }]);
  assert.is(cut.summary.truncatedTail, true);
  assert.is(cut.summary.skipped, 0, 'a cut last line is not a bad line');
});

test('a bad line in the middle is skipped and counted', async () => {
  const { records, summary } = await read('{"a":1}\nnot json\n{"b":2}\n');
  assert.equal(records, [{ a: 1 }, { b: 2 }]);
  assert.is(summary.skipped, 1);
});

test('one JSON document: pretty-printed object with events, or array', async () => {
  const events = [{ type: 'user.message', data: { content: 'hi', tags: ['x'] } }, { type: 'assistant.message', data: { content: 'yo' } }];
  for (const text of [JSON.stringify({ events }, null, 2), JSON.stringify(events, null, 2), JSON.stringify(events)]) {
    const { records, summary } = await read(text, 5);
    assert.equal(records, events);
    assert.is(summary.truncatedTail, false);
  }
  assert.is((await read(JSON.stringify({ events }, null, 2))).summary.document, true);
});

test('JSON lines whose first line is damaged are still read as lines', async () => {
  const { records, summary } = await read('{"a": \n{"b":2}\n{"c":3}\n');
  assert.equal(records, [{ b: 2 }, { c: 3 }]);
  assert.is(summary.skipped, 1);
});

test('a line over the line limit is skipped without being held', async () => {
  const long = JSON.stringify({ big: 'x'.repeat(5000) });
  const { records, summary } = await read(`{"a":1}\n${long}\n{"b":2}\n`, 100, 1 << 20, 1000);
  assert.equal(records, [{ a: 1 }, { b: 2 }]);
  assert.is(summary.skipped, 1);
});

test('the hash identifies the bytes', async () => {
  const a = await read('{"a":1}\n', 2);
  const b = await read('{"a":1}\n', 5);
  const c = await read('{"a":2}\n', 5);
  assert.is(a.summary.sha256, b.summary.sha256);
  assert.is.not(a.summary.sha256, c.summary.sha256);
  assert.is(a.summary.bytes, 8);
});

test('unusable bodies are refused as a whole', async () => {
  const empty = await refused('');
  assert.is(empty.status, 400);
  assert.match(empty.message, /empty/);
  assert.is((await refused('   \n\n')).status, 400);
  const binary = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256));
  assert.match((await refused(binary)).message, /no JSON/);
  assert.is((await refused('{"only": "a cut line')).status, 400);
  assert.match((await refused('{\n  "a": [1, 2\n')).message, /no JSON/);
  const big = await refused('{"a":1}\n'.repeat(200), { maxBytes: 1000 });
  assert.is(big.status, 413);
  assert.is(big.code, 'body_too_large');
});

test.run();
