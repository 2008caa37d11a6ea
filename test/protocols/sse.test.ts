/**
 * The SSE parser, tested as undici tests its own: byte streams recorded from the scripted
 * upstream (each protocol's real wire format, over real HTTP) and the WHATWG spec's own
 * examples, replayed whole, split at every chunk boundary, byte by byte, and with CRLF
 * and CR line ends, against a plain reading of the spec. Then its limits: time linear in
 * the bytes whatever their shape, and an event over the size limit counted, not kept.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SseParser } from '../../src/protocols/sse.js';
import type { SseEvent } from '../../src/protocols/types.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';

interface Context {
  upstream: ScriptedUpstream;
  recorded: Array<{ name: string; bytes: Buffer }>;
}
const test = suite<Context>('SSE parser');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream({ statefulResponses: true });
  const text = 'Naïve café — ✓ 𝄞 emoji 🎉 and a long enough answer to be split into several deltas.';
  const record = async (name: string, path: string, body: object, reply: Parameters<ScriptedUpstream['enqueue']>[0]) => {
    context.upstream.enqueue(reply);
    const response = await fetch(`${context.upstream.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test', 'x-api-key': 'sk-test', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ ...body, stream: true }),
    });
    assert.match(response.headers.get('content-type') ?? '', /text\/event-stream/);
    return { name, bytes: Buffer.from(await response.arrayBuffer()) };
  };
  const chat = { model: 'gpt-4o', messages: [{ role: 'user', content: 'go' }], stream_options: { include_usage: true } };
  const messages = { model: 'claude-sonnet-4-6', max_tokens: 100, messages: [{ role: 'user', content: 'go' }] };
  const responses = { model: 'gpt-4o', input: 'go' };
  const call = { type: 'tool_call' as const, name: 'get_weather', arguments: { city: 'Zürich', units: ['°C'] }, text: 'Let me check.' };
  context.recorded = [
    await record('chat completions, text', '/v1/chat/completions', chat, { type: 'text', text }),
    await record('chat completions, tool call', '/v1/chat/completions', chat, call),
    await record('messages, thinking and text', '/v1/messages', messages, { type: 'text', text, thinking: 'Let me think — carefully.' }),
    await record('messages, tool call', '/v1/messages', messages, call),
    await record('responses, reasoning and text', '/v1/responses', responses, { type: 'text', text, thinking: 'Reasoning… ✓' }),
    await record('responses, tool call', '/v1/responses', responses, call),
  ];
});
test.after(({ upstream }) => upstream.close());

/** WHATWG "interpreting an event stream", read plainly from the whole decoded text. */
function reference(bytes: Buffer): SseEvent[] {
  let text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const lines = text.split(/\r\n|\r|\n/);
  lines.pop(); // no line end after it: not a line
  const events: SseEvent[] = [];
  let data: string[] = [];
  let name = '';
  let id: string | undefined;
  for (const line of lines) {
    if (line === '') {
      if (data.length > 0) events.push({ event: name || 'message', data: data.join('\n'), ...(id === undefined ? {} : { id }) });
      data = [];
      name = '';
      continue;
    }
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'data') data.push(value);
    else if (field === 'event') name = value;
    else if (field === 'id' && !value.includes('\0')) id = value;
  }
  return events;
}

function parse(pieces: Uint8Array[], options?: ConstructorParameters<typeof SseParser>[1]): SseEvent[] {
  const events: SseEvent[] = [];
  const parser = new SseParser((event) => events.push(event), options);
  for (const piece of pieces) parser.push(piece);
  parser.end();
  return events;
}

/** Every way of cutting `bytes` that the tests replay. */
function* splits(bytes: Buffer): Generator<[string, Uint8Array[]]> {
  yield ['whole', [bytes]];
  for (let at = 0; at <= bytes.length; at++) yield [`split at ${at}`, [bytes.subarray(0, at), bytes.subarray(at)]];
  yield ['byte by byte', Array.from(bytes, (byte) => Uint8Array.of(byte))];
}

const lineEnds = (bytes: Buffer, end: string) => Buffer.from(bytes.toString('latin1').replace(/\r\n|\r|\n/g, end), 'latin1');

function assertEverySplit(name: string, bytes: Buffer, expected: SseEvent[]): void {
  for (const [how, pieces] of splits(bytes)) assert.equal(parse(pieces), expected, `${name}, ${how}`);
}

test('recorded streams: the same events whole, split anywhere, byte by byte, with CRLF and CR', ({ recorded }) => {
  for (const { name, bytes } of recorded) {
    const expected = reference(bytes);
    assert.ok(expected.length >= 5, `${name}: ${expected.length} events`);
    assertEverySplit(name, bytes, expected);
    assertEverySplit(`${name} (CRLF)`, lineEnds(bytes, '\r\n'), expected);
    assertEverySplit(`${name} (CR)`, lineEnds(bytes, '\r'), expected);
  }
});

const SPEC: Array<[string, string, SseEvent[]]> = [
  ['multi-line data', 'data: YHOO\ndata: +2\ndata: 10\n\n', [{ event: 'message', data: 'YHOO\n+2\n10' }]],
  [
    'comments and ids',
    ': test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n',
    [
      { event: 'message', data: 'first event', id: '1' },
      { event: 'message', data: 'second event', id: '' },
      { event: 'message', data: ' third event', id: '' },
    ],
  ],
  ['empty data, and a last event without its blank line', 'data\n\ndata\ndata\n\ndata:', [{ event: 'message', data: '' }, { event: 'message', data: '\n' }]],
  ['one space is taken off the value', 'data:test\n\ndata: test\n\n', [{ event: 'message', data: 'test' }, { event: 'message', data: 'test' }]],
  ['event names', 'event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\nevent:\ndata: x\n\n', [
    { event: 'add', data: '73857293' },
    { event: 'remove', data: '2153' },
    { event: 'message', data: 'x' },
  ]],
  ['a byte order mark opens the stream only', '\uFEFFdata: a\n\n\uFEFFdata: b\n\ndata: c\n\n', [{ event: 'message', data: 'a' }, { event: 'message', data: 'c' }]],
  ['an id with NUL is ignored; retry and unknown fields too', 'id: 7\nretry: 10\nfoo: bar\ndata: a\n\nid: 8\u0000\ndata: b\n\n', [
    { event: 'message', data: 'a', id: '7' },
    { event: 'message', data: 'b', id: '7' },
  ]],
  ['mixed line ends', 'data: a\r\ndata: b\rdata: c\n\r\ndata: d\r\r', [{ event: 'message', data: 'a\nb\nc' }, { event: 'message', data: 'd' }]],
  ['a blank line without data dispatches nothing', '\n\nevent: x\n\ndata: y\n\n', [{ event: 'message', data: 'y' }]],
];

test('the spec examples, split anywhere', () => {
  for (const [name, text, expected] of SPEC) {
    const bytes = Buffer.from(text);
    assert.equal(reference(bytes), expected, `reference: ${name}`);
    assertEverySplit(name, bytes, expected);
  }
});

test('time is linear in the bytes: a 40 MB line without newline', () => {
  const piece = Buffer.alloc(64 * 1024, 'x');
  const pieces = 640; // 40 MiB
  let started = performance.now();
  let events: SseEvent[] = [];
  let parser = new SseParser((event) => events.push(event));
  parser.push(Buffer.from('data: '));
  for (let i = 0; i < pieces; i++) parser.push(piece);
  parser.push(Buffer.from('\n\n'));
  parser.end();
  const whole = performance.now() - started;
  assert.is(events.length, 1);
  assert.is(events[0].data.length, pieces * piece.length);
  assert.ok(whole < 2_000, `an event of 40 MiB read in ${whole.toFixed(0)} ms`);

  // Over the limit: counted to its end, never kept.
  const sizes: number[] = [];
  started = performance.now();
  events = [];
  parser = new SseParser((event) => events.push(event), { maxEventBytes: 8 * 1024 * 1024, onOversize: (bytes) => sizes.push(bytes) });
  parser.push(Buffer.from('data: '));
  for (let i = 0; i < pieces; i++) parser.push(piece);
  parser.end();
  const skipped = performance.now() - started;
  assert.equal(events, []);
  assert.equal(sizes, [6 + pieces * piece.length]);
  assert.ok(skipped < 2_000, `a line of 40 MiB skipped in ${skipped.toFixed(0)} ms`);
});

test('an event over the limit is reported once with its size and not dispatched; the next ones are', () => {
  const big = `event: response.completed\ndata: {"text":"${'y'.repeat(3000)}"}\ndata: more\n\n`;
  const text = `data: before\n\n: ${'c'.repeat(5000)}\ndata: after a long comment\n\n${big}data: after\n\n`;
  const bytes = Buffer.from(text);
  const oversize = Buffer.byteLength(big) - 1; // its lines and their ends, not the blank line
  for (const [how, pieces] of splits(bytes)) {
    const sizes: number[] = [];
    const events = parse(pieces, { maxEventBytes: 1024, onOversize: (size) => sizes.push(size) });
    assert.equal(
      events,
      [{ event: 'message', data: 'before' }, { event: 'message', data: 'after a long comment' }, { event: 'message', data: 'after' }],
      how,
    );
    assert.equal(sizes, [oversize], how);
  }
  // The stream ending inside the event still reports it.
  const sizes: number[] = [];
  parse([Buffer.from(`data: ${'z'.repeat(2000)}`)], { maxEventBytes: 1024, onOversize: (size) => sizes.push(size) });
  assert.equal(sizes, [2006]);
});

test.run();
