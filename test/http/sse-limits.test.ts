/**
 * An upstream that sends one SSE event larger than `sse-max-event-bytes`, through the real
 * proxy: the client still gets every byte as the upstream sent it, the answer is not
 * learnt from (checked once the extraction queue is empty), and Engram goes on serving
 * and learning.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { suite } from 'uvu';
import WebSocket from 'ws';
import * as assert from 'uvu/assert';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { idle, startEngram, type TestEngram } from '../support/engram.js';

interface Context {
  upstream: ScriptedUpstream;
  misbehaving: { url: string; close(): Promise<void> };
  engram: TestEngram;
}
const test = suite<Context>('SSE events over the size limit');
const LIMIT = 64 * 1024;
const MARK = 'BIG ANSWER';

const chunk = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-big', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
/** One answer whose second event is four times the limit. */
const BIG = Buffer.from(
  [chunk({ role: 'assistant', content: '' }), chunk({ content: `${'z'.repeat(4 * LIMIT)}` }), chunk({ content: ' done.' }), chunk({}, 'stop'), 'data: [DONE]\n\n'].join(''),
);

const responseEvent = (type: string, fields: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`;
const RESPONSE = { id: 'resp_big', object: 'response', created_at: 1, model: 'gpt-4o', status: 'in_progress', output: [] };
/** The same over the Responses API: its second event is four times the limit. */
const BIG_RESPONSE = Buffer.from(
  [
    responseEvent('response.created', { sequence_number: 0, response: RESPONSE }),
    responseEvent('response.output_text.delta', { sequence_number: 1, item_id: 'msg_big', output_index: 0, content_index: 0, delta: 'z'.repeat(4 * LIMIT) }),
    responseEvent('response.output_text.delta', { sequence_number: 2, item_id: 'msg_big', output_index: 0, content_index: 0, delta: ' done.' }),
    responseEvent('response.completed', { sequence_number: 3, response: { ...RESPONSE, status: 'completed' } }),
  ].join(''),
);

/** The agent's upstream: the big answer to a request that asks for it, the scripted upstream for the rest. */
async function startMisbehaving(target: string): Promise<Context['misbehaving']> {
  const server = http.createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const piece of request) chunks.push(piece as Buffer);
    const body = Buffer.concat(chunks);
    if (body.includes(MARK) && !body.includes('record_reflections')) {
      const big = request.url?.endsWith('/responses') ? BIG_RESPONSE : BIG;
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let at = 0; at < big.length; at += 16 * 1024) response.write(big.subarray(at, at + 16 * 1024));
      response.end();
      return;
    }
    const headers = Object.fromEntries(
      Object.entries(request.headers).filter(([name]) => !['host', 'content-length', 'connection'].includes(name)) as Array<[string, string]>,
    );
    const answer = await fetch(target + request.url, { method: request.method, headers, body: body.length > 0 ? body : undefined });
    response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
    if (answer.body) Readable.fromWeb(answer.body as never).pipe(response);
    else response.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.misbehaving = await startMisbehaving(context.upstream.url);
  context.engram = await startEngram({ 'settle-ms': '50', 'sse-max-event-bytes': String(LIMIT) });
});
test.after(async ({ upstream, misbehaving, engram }) => {
  await engram.close();
  await misbehaving.close();
  await upstream.close();
});

test('the client gets every byte, the answer is not learnt, and the server keeps serving', async ({ engram, upstream, misbehaving }) => {
  const agent = await engram.createAgent(misbehaving.url);
  const ask = (content: string) =>
    fetch(`${agent.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content }] }),
    });

  const big = await ask(`REMEMBER: the ${MARK} is coming`);
  assert.is(big.status, 200);
  const received = Buffer.from(await big.arrayBuffer());
  assert.is(received.length, BIG.length);
  assert.ok(received.equals(BIG), 'the bytes are the upstream’s');

  const normal = await ask('REMEMBER: the build runs on Fridays');
  assert.is(normal.status, 200);
  assert.match(await normal.text(), /data: \[DONE\]/);
  const learnt = await engram.waitForReflections(agent, 1);
  await idle(engram);

  assert.equal(learnt.map((reflection) => reflection.content), ['the build runs on Fridays']);
  assert.equal((await engram.reflections(agent)).length, 1);
  const extractions = upstream.extractionRequests();
  assert.is(extractions.length, 1);
  assert.not.ok(extractions.some((request) => request.raw.includes(MARK)), 'the big answer’s turn reached extraction');
});

test('over a Responses WebSocket the response ends with an error frame, and the connection goes on', async ({ engram, misbehaving }) => {
  const agent = await engram.createAgent(misbehaving.url);
  const socket = new WebSocket(`${agent.baseUrl.replace(/^http/, 'ws')}/v1/responses`, { headers: { authorization: `Bearer ${agent.token}` } });
  const frames: any[] = [];
  const waiting: Array<() => void> = [];
  socket.on('message', (data) => {
    frames.push(JSON.parse(String(data)));
    waiting.shift()?.();
  });
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  /** Frames up to and including the one that ends a response. */
  const untilEnd = async () => {
    const ends = (frame: any) => frame.type === 'error' || frame.type === 'response.completed';
    while (!frames.some(ends)) await new Promise<void>((resolve) => waiting.push(resolve));
    return frames.splice(0, frames.findIndex(ends) + 1);
  };
  const create = (input: string) => socket.send(JSON.stringify({ type: 'response.create', model: 'gpt-4o', input }));

  create(`the ${MARK} is coming`);
  const cut = await untilEnd();
  assert.equal(cut.map((frame) => frame.type), ['response.created', 'error']);
  const error = cut[1];
  assert.is(error.status, 502);
  assert.is(error.error.code, 'upstream_event_too_large');
  assert.match(error.error.message, /ENGRAM_SSE_MAX_EVENT_BYTES/);

  create('and now a normal question');
  const normal = await untilEnd();
  assert.is(normal.at(-1).type, 'response.completed', 'the connection serves the next response');
  assert.is(socket.readyState, WebSocket.OPEN);
  socket.close();
});

test.run();
