import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { arrayElementSpans, spliceArrayElements } from '../../src/protocols/json-splice.js';

const text = (raw: Buffer, [start, end]: [number, number]) => raw.subarray(start, end).toString('utf8');

test('finds the elements of the top-level array, whatever the strings and nesting hold', () => {
  const raw = Buffer.from(
    '{ "model":"m", "system":"a \\"messages\\": [1,2]", "nested":{"messages":[0]},\n' +
      '  "messages" : [ {"role":"user","content":"héllo ] } , \\\\"} ,\n{"role":"assistant","content":[{"type":"text","text":"{[\\"]}"}]} ],' +
      ' "tools": [] , "n": -1.5e3, "ok": true }',
  );
  const spans = arrayElementSpans(raw, 'messages')!;
  assert.is(spans.length, 2);
  assert.equal(JSON.parse(text(raw, spans[0])), { role: 'user', content: 'héllo ] } , \\' });
  assert.equal(JSON.parse(text(raw, spans[1])), { role: 'assistant', content: [{ type: 'text', text: '{["]}' }] });
});

test('takes the last of duplicate keys, as JSON.parse does, and handles empty arrays', () => {
  const raw = Buffer.from('{"messages":[1,2,3],"messages":[ ]}');
  assert.equal(arrayElementSpans(raw, 'messages'), []);
  assert.is(arrayElementSpans(Buffer.from('{"messages":"no"}'), 'messages'), undefined);
  assert.is(arrayElementSpans(Buffer.from('[1]'), 'messages'), undefined);
  assert.is(arrayElementSpans(Buffer.from('{"messages":[1,'), 'messages'), undefined);
});

test('a key spelled with escapes is still the key', () => {
  const raw = Buffer.from('{"mess\\u0061ges":[{"a":1}]}');
  const spans = arrayElementSpans(raw, 'messages')!;
  assert.equal(spans.map((span) => text(raw, span)), ['{"a":1}']);
});

test('splicing replaces only the chosen elements and keeps every other byte', () => {
  const raw = Buffer.from('{"system" : "keep  these  bytes",\n "messages":[ {"role":"user","content":"a"} ,{"role":"user" ,"content":"b"}],"x":1}');
  const out = spliceArrayElements(raw, 'messages', 2, new Map([[1, { role: 'user', content: 'b\n\n<engram-reflections>…</engram-reflections>' }]]))!;
  const expected = '{"system" : "keep  these  bytes",\n "messages":[ {"role":"user","content":"a"} ,{"role":"user","content":"b\\n\\n<engram-reflections>…</engram-reflections>"}],"x":1}';
  assert.is(out.toString('utf8'), expected);
  assert.equal(JSON.parse(out.toString('utf8')).messages[1].content, 'b\n\n<engram-reflections>…</engram-reflections>');
});

test('a length that does not match the parsed list refuses to splice', () => {
  const raw = Buffer.from('{"messages":[1,2]}');
  assert.is(spliceArrayElements(raw, 'messages', 3, new Map([[0, 5]])), undefined);
});

test.run();
