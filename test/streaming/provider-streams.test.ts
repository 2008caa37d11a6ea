/**
 * Real providers' streams (test/fixtures/provider-streams, recorded by others; see the
 * README there) replayed through the relay split at every byte boundary, one byte at a
 * time and at seeded random places (many cuts fall inside a UTF-8 sequence), with LF and
 * with CRLF line ends. Whatever the split, the client gets the very bytes the provider
 * sent, and the answer assembled for extraction (text, tool calls, stop reason), like
 * the events parsed from the stream (usage among them), is the one of the whole stream.
 * Then two of them through the real HTTP proxy to the official SDKs.
 */
import fs from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { ProtocolId } from '../../src/domain/types.js';
import { PROTOCOLS } from '../../src/protocols/index.js';
import { SseParser } from '../../src/protocols/sse.js';
import type { SseEvent } from '../../src/protocols/types.js';
import { relay, type RelayOutcome } from '../../src/streaming/relay.js';
import { startEngram } from '../support/engram.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/provider-streams');

interface Capture {
  file: string;
  protocol: ProtocolId;
  /**
   * How the provider frames each recorded chunk on the wire: Chat Completions sends
   * `data:` lines and ends with `data: [DONE]`; Responses and Messages name each event
   * after its `type`.
   */
  framing: 'data' | 'named';
  /** What extraction must read from it. */
  text: string;
  stopReason: string;
  usage: Record<string, unknown>;
}

const CAPTURES: Capture[] = [
  {
    file: 'azure-model-router.1.chunks.txt',
    protocol: 'chat-completions',
    framing: 'data',
    text: 'Capital of Denmark.',
    stopReason: 'stop',
    usage: { prompt_tokens: 15, completion_tokens: 78, total_tokens: 93 },
  },
  {
    file: 'deepseek-tool-call.chunks.txt',
    protocol: 'chat-completions',
    framing: 'data',
    text: '[tool call weather {"location": "San Francisco"}]',
    stopReason: 'tool_calls',
    usage: { prompt_tokens: 374, completion_tokens: 61, total_tokens: 435 },
  },
  {
    file: 'issue-19493-gpt-5.1-tool-call.chunks.txt',
    protocol: 'responses',
    framing: 'named',
    text: '[tool call get_weather {"city":"Beijing"}]',
    stopReason: 'tool_calls',
    usage: { input_tokens: 45, output_tokens: 25, total_tokens: 70 },
  },
  {
    file: 'anthropic-claude-sonnet-5-reasoning-summarized.chunks.txt',
    protocol: 'messages',
    framing: 'named',
    text: '- 1071 = 21 × 51 ✓\n- 462 = 21 × 22 ✓',
    stopReason: 'end_turn',
    usage: { input_tokens: 47, output_tokens: 373 },
  },
  {
    file: 'anthropic-json-tool.1.chunks.txt',
    protocol: 'messages',
    framing: 'named',
    // The streamed input parsed, as the SDKs parse it and send it back (`answeredConversationId`).
    text: '[tool call json {"elements":[{"location":"San Francisco","temperature":58,"condition":"sunny"}]}]',
    stopReason: 'tool_use',
    usage: { input_tokens: 849, output_tokens: 47 },
  },
];

/** The capture as the provider sent it, with LF line ends. */
function wireBytes(capture: Capture): Buffer {
  const chunks = fs.readFileSync(path.join(FIXTURES, capture.file), 'utf8').split('\n').filter((line) => line.trim() !== '');
  const events = chunks.map((chunk) => (capture.framing === 'named' ? `event: ${JSON.parse(chunk).type}\n` : '') + `data: ${chunk}\n\n`);
  return Buffer.from(events.join('') + (capture.framing === 'data' ? 'data: [DONE]\n\n' : ''));
}

const crlf = (bytes: Buffer): Buffer => Buffer.from(bytes.toString('utf8').replaceAll('\n', '\r\n'));

/** Seeded, so a failing split can be replayed (mulberry32). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `bytes` cut at `cuts` (sorted offsets). */
function cutAt(bytes: Buffer, cuts: number[]): Buffer[] {
  const pieces: Buffer[] = [];
  let from = 0;
  for (const at of cuts) {
    pieces.push(Buffer.from(bytes.subarray(from, at)));
    from = at;
  }
  pieces.push(Buffer.from(bytes.subarray(from)));
  return pieces;
}

/** Every way of cutting `bytes` that the test tries, with a name for failures. */
function* splits(bytes: Buffer, seed: number): Generator<[string, Buffer[]]> {
  yield ['whole', [bytes]];
  for (let at = 1; at < bytes.length; at++) yield [`cut at ${at}`, cutAt(bytes, [at])];
  yield ['one byte at a time', cutAt(bytes, Array.from({ length: bytes.length - 1 }, (_, i) => i + 1))];
  const next = random(seed);
  for (let round = 0; round < 200; round++) {
    const cuts: number[] = [];
    // Pieces of 1 to 64 bytes, the shapes TCP and TLS records give.
    for (let at = 1 + Math.floor(next() * 64); at < bytes.length; at += 1 + Math.floor(next() * 64)) cuts.push(at);
    yield [`random split ${round} (seed ${seed})`, cutAt(bytes, cuts)];
  }
  // Every multi-byte character cut in two at once.
  const inside = [...bytes.keys()].filter((at) => (bytes[at] & 0xc0) === 0x80);
  if (inside.length > 0) yield ['inside every UTF-8 sequence', cutAt(bytes, inside)];
}

async function replay(protocol: ProtocolId, pieces: Buffer[]): Promise<{ received: Buffer; outcome: RelayOutcome }> {
  const received: Buffer[] = [];
  const outcome = await relay({
    body: Readable.from(pieces),
    sink: {
      write: (chunk) => received.push(Buffer.from(chunk)) > 0,
      onDrain: (resume) => resume(),
      end: () => undefined,
      fail: () => assert.unreachable('the relay failed'),
    },
    adapter: PROTOCOLS[protocol],
    sse: true,
    signal: new AbortController().signal,
    failure: (error) => error,
  });
  return { received: Buffer.concat(received), outcome };
}

function parse(pieces: Buffer[]): SseEvent[] {
  const events: SseEvent[] = [];
  const parser = new SseParser((event) => events.push(event));
  for (const piece of pieces) parser.push(piece);
  parser.end();
  return events;
}

/** The token counts the stream reports, from its last event that carries any. */
function usageOf(events: SseEvent[]): Record<string, unknown> | undefined {
  let usage: Record<string, unknown> | undefined;
  for (const event of events) {
    if (!event.data.startsWith('{')) continue;
    const json = JSON.parse(event.data);
    usage = json.usage ?? json.response?.usage ?? usage;
  }
  return usage;
}

for (const capture of CAPTURES) {
  test(`${capture.file}: split anywhere, LF or CRLF, the same bytes reach the client and the same answer is assembled`, async () => {
    const lf = wireBytes(capture);
    const reference = await replay(capture.protocol, [lf]);
    assert.is(reference.outcome.outcome, 'completed');
    if (reference.outcome.outcome !== 'completed') return;
    const answer = reference.outcome.answer;
    assert.ok(answer.turns[0]?.text.includes(capture.text), `assembled: ${JSON.stringify(answer.turns)}`);
    assert.is(answer.stopReason, capture.stopReason);
    assert.is(answer.errored, false);
    const events = parse([lf]);
    const usage = usageOf(events);
    for (const [name, count] of Object.entries(capture.usage)) assert.is(usage?.[name], count, `usage ${name}`);

    let tried = 0;
    for (const [ends, bytes] of [['LF', lf], ['CRLF', crlf(lf)]] as const) {
      for (const [how, pieces] of splits(bytes, bytes.length)) {
        const { received, outcome } = await replay(capture.protocol, pieces);
        const where = `${ends}, ${how}`;
        assert.ok(received.equals(bytes), `relayed bytes differ (${where})`);
        assert.equal(outcome, reference.outcome, `assembled answer differs (${where})`);
        assert.equal(parse(pieces), events, `parsed events differ (${where})`);
        tried += 1;
      }
    }
    assert.ok(tried > 2 * lf.length, `${tried} splits`);
  });
}

test('the captures hold multi-byte UTF-8, so some cuts fall inside a character', () => {
  const inside = CAPTURES.map((capture) => [...wireBytes(capture)].filter((byte) => (byte & 0xc0) === 0x80).length);
  assert.ok(inside.some((count) => count > 0), JSON.stringify(inside));
});

/** A provider that answers every request with `bytes`, written in small pieces. */
async function replayingProvider(bytes: Buffer): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', async () => {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const next = random(7);
      for (let at = 0; at < bytes.length; ) {
        const size = 1 + Math.floor(next() * 40);
        response.write(bytes.subarray(at, at + size));
        at += size;
        await new Promise((resolve) => setImmediate(resolve));
      }
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

test('through the HTTP proxy: the Anthropic SDK reads the recorded thinking stream whole, CRLF line ends and all', async () => {
  const capture = CAPTURES.find((c) => c.file.startsWith('anthropic-claude'))!;
  const provider = await replayingProvider(crlf(wireBytes(capture)));
  const engram = await startEngram({ 'settle-ms': '60000' });
  try {
    const agent = await engram.createAgent(provider.url);
    const client = new Anthropic({ baseURL: agent.baseUrl, apiKey: agent.token, maxRetries: 0 });
    const message = await client.messages
      .stream({ model: 'claude-sonnet-5', max_tokens: 1024, messages: [{ role: 'user', content: 'What is gcd(1071, 462)?' }] })
      .finalMessage();
    assert.equal(message.content.map((block) => block.type), ['thinking', 'text']);
    const text = message.content[1].type === 'text' ? message.content[1].text : '';
    assert.ok(text.endsWith(capture.text), text);
    assert.is(message.stop_reason, 'end_turn');
    assert.is(message.usage.output_tokens, 373);
  } finally {
    await engram.close();
    provider.server.closeAllConnections();
    provider.server.close();
  }
});

test('through the HTTP proxy: the OpenAI SDK reads the recorded Responses tool call and its usage', async () => {
  const capture = CAPTURES.find((c) => c.protocol === 'responses')!;
  const provider = await replayingProvider(wireBytes(capture));
  const engram = await startEngram({ 'settle-ms': '60000' });
  try {
    const agent = await engram.createAgent(provider.url);
    const client = new OpenAI({ baseURL: `${agent.baseUrl}/v1`, apiKey: agent.token, maxRetries: 0 });
    const stream = await client.responses.create({ model: 'gpt-5.1', input: 'Weather in Beijing?', stream: true });
    const types: string[] = [];
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.completed') completed = event.response;
    }
    assert.is(types.length, 12);
    const call = completed?.output[0];
    assert.is(call?.type, 'function_call');
    assert.is(call?.type === 'function_call' ? call.arguments : undefined, '{"city":"Beijing"}');
    assert.is(completed?.usage?.total_tokens, 70);
  } finally {
    await engram.close();
    provider.server.closeAllConnections();
    provider.server.close();
  }
});

test.run();
