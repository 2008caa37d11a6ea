/**
 * What a transcript upload can hold besides short JSON lines: one JSON document, and lines
 * too long to parse at once. Both are read as their bytes arrive, so the records must be
 * the ones `JSON.parse` finds in any split of the bytes, handed out while the body is still
 * coming, with a bounded size per record, and without ever holding the event loop.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EngramError } from '../../src/errors.js';
import { readJsonRecords, type ReadOptions } from '../../src/transcripts/json-records.js';
import { retainedHeap } from '../support/retained-heap.js';

const test = suite('reading transcript documents and long lines');

async function read(pieces: Iterable<Buffer>, options: Partial<ReadOptions> = {}) {
  const records: unknown[] = [];
  const summary = await readJsonRecords(
    (async function* () {
      yield* pieces;
    })(),
    (record) => records.push(record),
    { maxBytes: 1 << 30, ...options },
  );
  return { records, summary };
}

function* everySplit(bytes: Buffer): Generator<Buffer[]> {
  for (let at = 0; at <= bytes.length; at++) yield [bytes.subarray(0, at), bytes.subarray(at)];
}

const pieces = (bytes: Buffer, size: number) => Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));

const EVENTS = [
  { type: 'session.start', data: { sessionId: 's-1', selectedModel: 'gpt-5', nested: { deep: [1, 2.5e-3, -0, true, false, null] } } },
  { type: 'user.message', data: { content: 'Naïve café — ✓ 𝄞 "quoted" \\ back\\slash \n newline \u0000 nul \ud83c\udf89', tags: [] } },
  { type: 'assistant.message', data: { content: '', toolRequests: [{ name: 'shell', arguments: { cmd: 'ls -la' } }] } },
  [],
  'a string record',
  42,
];

test('a document, pretty-printed or with events, split anywhere: the records JSON.parse finds', async () => {
  const documents = [
    JSON.stringify(EVENTS, null, 2),
    JSON.stringify({ version: 1, events: EVENTS, meta: { note: 'after' } }, null, 2),
    JSON.stringify({ events: EVENTS }, null, '\t').replaceAll('\n', '\r\n'),
  ];
  for (const text of documents) {
    for (const split of everySplit(Buffer.from(text))) {
      const { records, summary } = await read(split);
      assert.equal(records, EVENTS);
      assert.is(summary.document, true);
      assert.is(summary.skipped, 0);
    }
  }
  const single = { type: 'x', data: { a: [1, { b: 2 }] } };
  const { records } = await read([Buffer.from(JSON.stringify(single, null, 2))]);
  assert.equal(records, [single], 'an object without events is one record');
  const followed = await read([Buffer.from('{\n"events": []\n}\n{"type":"x"}\n')]);
  assert.equal(followed.records, [{ type: 'x' }], 'more JSON after the document: JSON lines after all');
  assert.is(followed.summary.skipped, 3);
});

test('a long line, split anywhere, gives what JSON.parse gives; a long array line is spread', async () => {
  const long = { type: 'user.message', data: { content: `start ${'é𝄞x'.repeat(50_000)} end` } };
  const array = Array.from({ length: 20_000 }, (_, i) => ({ i, text: 'ü'.repeat(i % 7) }));
  const text = `{"a":1}\n${JSON.stringify(long)}\n${JSON.stringify(array)}\n{"b":2}\n`;
  const bytes = Buffer.from(text);
  assert.ok(bytes.length > 400_000);
  const expected = [{ a: 1 }, long, ...array, { b: 2 }];
  for (const size of [1, 4093, 16384, 65536, bytes.length]) {
    const { records, summary } = await read(pieces(bytes, size));
    assert.equal(records, expected, `pieces of ${size}`);
    assert.is(summary.skipped, 0);
    assert.is(summary.document, false);
  }
  for (let at = 0; at < bytes.length; at += 9973) {
    assert.equal((await read([bytes.subarray(0, at), bytes.subarray(at)])).records, expected, `split at ${at}`);
  }
});

test('a long bad line is skipped without being held; a long cut last line is a cut line', async () => {
  const bad = `{"x": "${'y'.repeat(300_000)}" oops}`;
  const { records, summary } = await read(pieces(Buffer.from(`{"a":1}\n${bad}\n{"b":2}\n{"c": "${'z'.repeat(300_000)}`), 5000));
  assert.equal(records, [{ a: 1 }, { b: 2 }]);
  assert.is(summary.skipped, 1);
  assert.is(summary.truncatedTail, true);
});

test('JSON lines whose first line is damaged and second line is long are still read as lines', async () => {
  const second = { type: 'user', text: 'w'.repeat(200_000) };
  const { records, summary } = await read(pieces(Buffer.from(`{"a": \n${JSON.stringify(second)}\n{"c":3}\n`), 4096));
  assert.equal(records, [second, { c: 3 }]);
  assert.is(summary.skipped, 1);
  assert.is(summary.document, false);
});

test('a document that stops short: the records before its end are used', async () => {
  const text = JSON.stringify(EVENTS, null, 2);
  const { records, summary } = await read([Buffer.from(text.slice(0, text.indexOf('"a string record"')))]);
  assert.equal(records, EVENTS.slice(0, 4));
  assert.is(summary.truncatedTail, true);
});

test('a document is read as it arrives: records are handed out before its end', async () => {
  const count = 200_000;
  const bytes = Buffer.from(`[\n${Array.from({ length: count }, (_, i) => `{"i":${i}}`).join(',\n')}\n]`);
  let seenBeforeEnd = -1;
  let records = 0;
  const body = (async function* () {
    yield* pieces(bytes.subarray(0, bytes.length - 100), 65536);
    seenBeforeEnd = records;
    yield bytes.subarray(bytes.length - 100);
  })();
  const summary = await readJsonRecords(body, () => records++, { maxBytes: 1 << 30 });
  assert.is(summary.records, count);
  assert.ok(seenBeforeEnd > count - 20, `${seenBeforeEnd} of ${count} records handed out before the last bytes came`);
});

test('a record over the limits: a line is skipped, a document is refused with 413', async () => {
  const many = `[${Array.from({ length: 50_000 }, () => '{}').join(',')}]`; // over 128 KiB: a line read as it arrives
  const lines = await read([Buffer.from(`{"a":1}\n{"deep": ${many}}\n{"b":2}\n`)], { maxRecordTokens: 1000 });
  assert.equal(lines.records, [{ a: 1 }, { b: 2 }]);
  assert.is(lines.summary.skipped, 1);

  const spread = await read([Buffer.from(`${many}\n`)], { maxRecordTokens: 1000 });
  assert.is(spread.records.length, 50_000, 'an array line holds one element at a time');

  for (const document of [`[\n{"a":1},\n{"deep": ${many}}\n]`, `{\n"events": [{"deep": ${many}}]}`, `[\n{"long": "${'q'.repeat(5000)}"}]`]) {
    const refused = await read([Buffer.from(document)], { maxRecordTokens: 1000, maxLineBytes: 4096 }).catch((error) => error);
    assert.instance(refused, EngramError);
    assert.is((refused as EngramError).status, 413);
    assert.match((refused as EngramError).message, /JSON lines/);
  }
});

test('16 million {} in one document: read whole without holding the event loop or the records', async () => {
  const count = 16 * 1024 * 1024 - 1;
  const bytes = Buffer.allocUnsafe(2 + 4 * count);
  bytes.write('[\n', 0);
  for (let i = 0; i < count; i++) bytes.write(i === count - 1 ? '{}\n]' : '{},\n', 2 + 4 * i, 'latin1');
  // The longest the event loop waited, less the time the test's own collections held it.
  let stall = 0;
  let forced = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    stall = Math.max(stall, now - last - forced);
    forced = 0;
    last = now;
  }, 5);
  const heapBefore = retainedHeap().bytes;
  let heapPeak = heapBefore;
  let records = 0;
  try {
    // One 64 MiB piece: the reader slices it itself.
    const summary = await readJsonRecords(
      (async function* () {
        yield bytes;
      })(),
      () => {
        if (++records % 2_000_000 !== 0) return;
        const sample = retainedHeap();
        forced += sample.collectMs;
        heapPeak = Math.max(heapPeak, sample.bytes);
      },
      { maxBytes: 64 * 1024 * 1024 },
    );
    assert.is(summary.records, count);
    assert.is(summary.document, true);
  } finally {
    clearInterval(timer);
  }
  // A whole-document parse held it for seconds; the bound leaves room for a loaded machine.
  assert.ok(stall < 1_000, `the event loop was held ${stall.toFixed(0)} ms`);
  // Holding the 16 million records would keep hundreds of MiB alive mid-read.
  assert.ok(heapPeak - heapBefore < 64 * 1024 * 1024, `the read kept ${((heapPeak - heapBefore) / 1048576).toFixed(0)} MiB alive`);
});

test.run();
