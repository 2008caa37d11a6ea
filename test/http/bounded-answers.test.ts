/**
 * Issue 31: answers are bounded. A real Engram (real SQLite, its log captured), the
 * scripted upstream streaming answers without end, real SDK clients and a real WebSocket.
 * A streamed answer ends at `ENGRAM_STREAM_MAX_MS` with the protocol's own error event
 * (`stream_time_limit`), in every protocol and over the WebSocket; the log line and the
 * request log say why. An answer over `ENGRAM_ANSWER_MAX_BYTES` reaches the client byte
 * for byte, is settled (no false failure) and learnt from its first part, and the log says
 * so. The per-agent in-flight limit is on by default.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { WebSocket, type RawData } from 'ws';
import { loadConfig } from '../../src/config.js';
import { start, type Running } from '../../src/main.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { ADMIN_TOKEN, eventually } from '../support/engram.js';

const STREAM_MAX_MS = 1_500;
const ANSWER_MAX_BYTES = 64 * 1024;
/** With `max-in-flight` 32, the default per-agent limit is 2. */
const MAX_IN_FLIGHT = 32;

interface Context {
  dir: string;
  running: Running;
  upstream: ScriptedUpstream;
  lines: string[];
  agent: { id: string; org: string; token: string; base_url: string };
}
const test = suite<Context>('bounded answers');

async function admin(url: string, method: string, pathname: string, body?: unknown): Promise<any> {
  const response = await fetch(url + pathname, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return response.json();
}

test.before(async (context) => {
  context.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-bounded-'));
  context.lines = [];
  const config = loadConfig(
    {
      port: '0',
      host: '127.0.0.1',
      'data-dir': context.dir,
      'admin-token': ADMIN_TOKEN,
      'settle-ms': '50',
      'log-level': 'info',
      'stream-max-ms': String(STREAM_MAX_MS),
      'answer-max-bytes': String(ANSWER_MAX_BYTES),
      'max-in-flight': String(MAX_IN_FLIGHT),
    },
    {},
  );
  context.running = await start(config, { logger: { level: 'info', stream: { write: (line: string) => void context.lines.push(line) } } });
  context.upstream = await startScriptedUpstream();
  const org = await admin(context.running.url, 'POST', '/v0/orgs', { name: 'bounded' });
  const agent = await admin(context.running.url, 'POST', `/v0/orgs/${org.id}/agents`, {
    name: 'bounded',
    type: 'api_provider',
    upstream: { base_url: context.upstream.url, api_key: 'sk-bounded' },
  });
  context.agent = { ...agent, org: org.id };
});
test.after(async ({ running, upstream, dir }) => {
  await running.close();
  await upstream.close();
  fs.rmSync(dir, { recursive: true, force: true });
});
test.before.each(({ upstream, lines }) => {
  upstream.reset();
  lines.length = 0;
});

const logged = (lines: string[]) => lines.map((line) => JSON.parse(line));

/** The turn's `proxied request finished` line and its request log entry, once written. */
async function turnRecord(context: Context, requestId?: string): Promise<{ line: any; entry: any }> {
  const line = await eventually(async () => logged(context.lines).find((record) => record.msg === 'proxied request finished'), 5_000, 'the log line');
  const path = `/v0/orgs/${context.agent.org}/agents/${context.agent.id}/requests`;
  const entry = await eventually(async () => {
    const page = await admin(context.running.url, 'GET', path);
    return requestId === undefined ? page.data[0] : page.data.find((item: any) => item.id === requestId);
  }, 5_000, 'the request log entry');
  return { line, entry };
}

function assertTimeLimited({ line, entry }: { line: any; entry: any }, context: Context): void {
  assert.is(line.error, 'stream_time_limit');
  assert.is(line.answerLimit, 'stream_max_ms');
  assert.is(line.outcome, 'interrupted');
  assert.is(line.upstreamError, undefined, 'not blamed on the upstream');
  assert.ok(logged(context.lines).some((record) => /ENGRAM_STREAM_MAX_MS/.test(record.msg)), 'a warning says why');
  assert.is(entry.answer_limit, 'stream_max_ms');
  assert.is(entry.outcome, 'interrupted');
  assert.ok(context.upstream.conversationRequests()[0].abandoned, 'the upstream request is cut');
}

test('chat completions (openai SDK): an endless answer ends at the time limit with an APIError `stream_time_limit`', async (context) => {
  context.upstream.enqueue({ type: 'endless', deltaBytes: 8 * 1024 });
  const client = new OpenAI({ baseURL: `${context.agent.base_url}/v1`, apiKey: context.agent.token, maxRetries: 0 });
  const started = performance.now();
  let chunks = 0;
  const error = await (async () => {
    const stream = await client.chat.completions.create({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'go on' }] });
    for await (const _ of stream) chunks++;
  })().then(() => undefined, (caught: unknown) => caught);
  const took = performance.now() - started;
  assert.instance(error, OpenAI.APIError);
  assert.is((error as InstanceType<typeof OpenAI.APIError>).code, 'stream_time_limit');
  assert.ok(chunks > 10, `${chunks} chunks came first`);
  assert.ok(took >= STREAM_MAX_MS - 50 && took < STREAM_MAX_MS + 4_000, `ended after ${took.toFixed(0)} ms`);
  assertTimeLimited(await turnRecord(context), context);
});

test('messages (anthropic SDK): an endless answer ends with an `error` event of type timeout_error', async (context) => {
  context.upstream.enqueue({ type: 'endless', deltaBytes: 8 * 1024 });
  const client = new Anthropic({ baseURL: context.agent.base_url, apiKey: context.agent.token, maxRetries: 0 });
  const error = await (async () => {
    const stream = await client.messages.create({ model: 'claude-test', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'go on' }] });
    for await (const _ of stream) void _;
  })().then(() => undefined, (caught: unknown) => caught);
  assert.instance(error, Anthropic.APIError);
  const body = (error as InstanceType<typeof Anthropic.APIError>).error as any;
  assert.is(body?.error?.type, 'timeout_error');
  assert.match(body?.error?.message, /ENGRAM_STREAM_MAX_MS/);
  assertTimeLimited(await turnRecord(context), context);
});

test('responses over HTTP (openai SDK): an endless answer ends with an `error` event `stream_time_limit`', async (context) => {
  context.upstream.enqueue({ type: 'endless', deltaBytes: 8 * 1024 });
  const client = new OpenAI({ baseURL: `${context.agent.base_url}/v1`, apiKey: context.agent.token, maxRetries: 0 });
  const error = await (async () => {
    const stream = await client.responses.create({ model: 'gpt-test', stream: true, input: 'go on' });
    for await (const _ of stream) void _;
  })().then(() => undefined, (caught: unknown) => caught);
  assert.instance(error, OpenAI.APIError);
  assert.match(String((error as Error).message), /ENGRAM_STREAM_MAX_MS/);
  assertTimeLimited(await turnRecord(context), context);
});

test('responses over a WebSocket: an endless answer ends with an error frame `stream_time_limit`; the connection stays usable', async (context) => {
  context.upstream.enqueue({ type: 'endless', deltaBytes: 8 * 1024 });
  const socket = new WebSocket(`${context.agent.base_url.replace(/^http/, 'ws')}/v1/responses`, { headers: { authorization: `Bearer ${context.agent.token}` } });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  const frames: any[] = [];
  let wake: (() => void) | undefined;
  socket.on('message', (data: RawData) => {
    frames.push(JSON.parse(data.toString()));
    wake?.();
  });
  const until = async (check: () => boolean) => {
    while (!check()) await new Promise<void>((resolve) => (wake = resolve));
  };
  socket.send(JSON.stringify({ type: 'response.create', model: 'gpt-test', input: 'go on' }));
  await until(() => frames.some((frame) => frame.type === 'error'));
  const error = frames.find((frame) => frame.type === 'error');
  assert.is(error.code ?? error.error?.code, 'stream_time_limit');
  assert.ok(frames.filter((frame) => frame.type === 'response.output_text.delta').length > 10);
  const { entry } = await turnRecord(context);
  assert.is(entry.answer_limit, 'stream_max_ms');
  // The next response on the same connection is answered whole.
  frames.length = 0;
  socket.send(JSON.stringify({ type: 'response.create', model: 'gpt-test', input: 'and now briefly' }));
  await until(() => frames.some((frame) => frame.type === 'response.completed' || frame.type === 'error'));
  assert.ok(frames.some((frame) => frame.type === 'response.completed'));
  socket.close();
});

test('an answer over the answer limit reaches the client byte for byte, settles, is learnt from its first part; the log says so', async (context) => {
  const head = 'The deploy script lives in scripts/deploy.sh and needs the staging key. ';
  const text = head + 'filler '.repeat(30_000) + 'TAIL-MARKER';
  context.upstream.enqueue({ type: 'text', text });
  const request = { model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'how do I deploy?' }] };
  const response = await fetch(`${context.agent.base_url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${context.agent.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(request),
  });
  const relayed = Buffer.from(await response.arrayBuffer());
  // The same reply straight from the upstream: the bytes Engram relayed are its bytes.
  context.upstream.enqueue({ type: 'text', text });
  const direct = await fetch(`${context.upstream.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request) });
  assert.ok(relayed.equals(Buffer.from(await direct.arrayBuffer())), 'relayed untouched');
  assert.ok(relayed.toString().endsWith('data: [DONE]\n\n'), 'no error frame after [DONE]');

  const requestId = response.headers.get('x-engram-request-id')!;
  const { line, entry } = await turnRecord(context, requestId);
  assert.is(line.outcome, 'settled');
  assert.is(line.answerLimit, 'answer_max_bytes');
  assert.is(entry.answer_limit, 'answer_max_bytes');
  assert.is(entry.outcome, 'settled');
  const warning = logged(context.lines).find((record) => /ENGRAM_ANSWER_MAX_BYTES/.test(record.msg));
  assert.ok(warning, 'a warning says the answer was over the limit');
  assert.is(warning.keptBytes, ANSWER_MAX_BYTES);
  assert.is(warning.bytes, Buffer.byteLength(text));
  // Extraction took what fits: the start of the answer, never its tail.
  const extraction = await eventually(async () => context.upstream.extractionRequests().find((call) => call.raw.includes('how do I deploy')), 10_000, 'the extraction call');
  const sent = extraction.raw.toString();
  assert.ok(sent.includes('scripts/deploy.sh'));
  assert.not.ok(sent.includes('TAIL-MARKER'));
});

test('per-agent in-flight limit, on by default: a sixteenth of the process budget; past it 429 with Retry-After in the protocol shape', async (context) => {
  assert.is(loadConfig({}, {}).limits.agentConcurrency, 64);
  assert.is(loadConfig({ 'max-in-flight': '160' }, {}).limits.agentConcurrency, 10);
  assert.is(loadConfig({ 'concurrency-per-agent': '0' }, {}).limits.agentConcurrency, 0, 'still can be turned off');

  context.upstream.enqueue({ type: 'endless', deltaBytes: 1024 }, { type: 'endless', deltaBytes: 1024 });
  const open = () =>
    fetch(`${context.agent.base_url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': context.agent.token, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-test', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'go on' }] }),
    });
  const first = await open();
  const second = await open();
  assert.is(first.status, 200);
  assert.is(second.status, 200);
  const third = await open();
  assert.is(third.status, 429);
  assert.ok(Number(third.headers.get('retry-after')) >= 1);
  const body = await third.json();
  assert.is(body.type, 'error');
  assert.is(body.error.type, 'rate_limit_error');
  assert.match(body.error.message, /ENGRAM_CONCURRENCY_PER_AGENT/);
  // Both streams end at the time limit; the slots come back.
  await Promise.all([first.text(), second.text()]);
  await eventually(async () => ((await open().then((r) => (r.body?.cancel(), r.status))) === 200 ? true : undefined), 5_000, 'a free slot');
});

test.run();
