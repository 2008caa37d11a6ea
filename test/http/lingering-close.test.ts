/**
 * An answer given before the request's body was read (401 for a wrong token, 413 for a
 * body over the limit, 429 over a rate) reaches the client even while its body is still
 * on its way: Engram reads and discards what keeps arriving, up to a bound, before it
 * closes (a lingering close). Closing at once, with bytes unread, resets the connection:
 * the client's write fails with EPIPE and its stack throws the answer away, so an SDK
 * retries a "connection error" instead of reporting a bad key.
 *
 * The clients are undici's `fetch` and the `openai` SDK (which sends through it), and a
 * bare socket that reads its answer only once it has sent its whole body, as a busy
 * client does; the bound is checked with a bare socket that never stops sending.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import { loadConfig } from '../../src/config.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { startEngram, type TestAgent, type TestEngram } from '../support/engram.js';
import { sendBody, type SendingAnswer } from '../support/raw-http.js';

const MB = 1024 * 1024;

interface Context {
  upstream: ScriptedUpstream;
  /** Default limits (32 MB bodies), one request a minute per token. */
  engram: TestEngram;
  agent: TestAgent;
  /** An agent whose token has used its one request of the minute. */
  limited: TestAgent;
  /** 1 MB bodies and transcripts (so at most 1 MB is discarded), a 2 s lingering close. */
  small: TestEngram;
  smallAgent: TestAgent;
}
const test = suite<Context>('lingering close after an early answer');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.engram = await startEngram({ 'rate-limit-token': '1' });
  context.agent = await context.engram.createAgent(context.upstream.url);
  context.limited = await context.engram.createAgent(context.upstream.url);
  const first = await fetch(`${context.limited.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${context.limited.token}` } });
  assert.is(first.status, 200, 'the one request of the minute');
  await first.text();
  context.small = await startEngram({ 'body-limit': String(MB), 'transcript-max-bytes': String(MB), 'linger-ms': '2000' });
  context.smallAgent = await context.small.createAgent(context.upstream.url);
});
test.after(async ({ upstream, engram, small }) => {
  await small.close();
  await engram.close();
  await upstream.close();
});

const WRONG_TOKEN = 'egm_not_the_token_of_this_agent_000000000000';

/** A body of `bytes`, made as it is sent: undici sends it chunked, the way a streaming upload goes. */
function streamedBody(bytes: number): ReadableStream<Uint8Array> {
  const chunk = new Uint8Array(256 * 1024).fill(0x61);
  let left = bytes;
  return new ReadableStream({
    pull(controller) {
      if (left <= 0) return controller.close();
      const piece = chunk.subarray(0, Math.min(chunk.length, left));
      left -= piece.length;
      controller.enqueue(piece);
    },
  });
}

async function postChat(agent: TestAgent, token: string, body: Buffer | ReadableStream<Uint8Array>): Promise<Response | Error> {
  return fetch(`${agent.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body,
    // Node's fetch needs this for a stream body.
    ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
  } as RequestInit).catch((error: unknown) => error as Error);
}

async function assertAnswered(response: Response | Error, status: number, code: string, what: string): Promise<void> {
  assert.ok(!(response instanceof Error), `${what}: the client got an answer, not ${String(response)} (${String((response as Error).cause)})`);
  const answered = response as Response;
  assert.is(answered.status, status, what);
  const body = await answered.json();
  assert.is(body.error.code, code, what);
}

test('the linger time is 30 s unless set; 0 turns it off', () => {
  assert.is(loadConfig({}, {}).http.lingerMs, 30_000);
  assert.is(loadConfig({}, { ENGRAM_LINGER_MS: '0' }).http.lingerMs, 0);
  assert.is(loadConfig({ 'linger-ms': '5000' }, {}).http.lingerMs, 5_000);
});

test('undici fetch: 30-40 MB bodies, whole or streamed, get the 401, 413 or 429 Engram wrote', async ({ engram, upstream, agent, limited }) => {
  // A token has one request a minute: each body over the limit is sent with a token of its own.
  const fresh = () => engram.createAgent(upstream.url);
  const [whole, streamed] = [await fresh(), await fresh()];
  const cases: Array<[string, () => Promise<Response | Error>, number, string]> = [
    ['401, 30 MB whole', () => postChat(agent, WRONG_TOKEN, Buffer.alloc(30 * MB, 'a')), 401, 'unauthorized'],
    ['401, 40 MB streamed', () => postChat(agent, WRONG_TOKEN, streamedBody(40 * MB)), 401, 'unauthorized'],
    ['413, 40 MB whole (declared too large)', () => postChat(whole, whole.token, Buffer.alloc(40 * MB, 'a')), 413, 'body_too_large'],
    ['413, 40 MB streamed (over the limit while read)', () => postChat(streamed, streamed.token, streamedBody(40 * MB)), 413, 'body_too_large'],
    ['429, 30 MB whole', () => postChat(limited, limited.token, Buffer.alloc(30 * MB, 'a')), 429, 'rate_limited'],
    ['429, 30 MB streamed', () => postChat(limited, limited.token, streamedBody(30 * MB)), 429, 'rate_limited'],
  ];
  for (const [what, send, status, code] of cases) await assertAnswered(await send(), status, code, what);
});

test('the openai SDK reports the bad key, the size and the rate, not a connection error', async ({ engram, upstream, agent, limited }) => {
  const own = await engram.createAgent(upstream.url);
  const huge = (bytes: number) => [{ role: 'user' as const, content: 'a'.repeat(bytes) }];
  const cases: Array<[string, OpenAI, number, number]> = [
    ['wrong key', new OpenAI({ baseURL: `${agent.baseUrl}/v1`, apiKey: WRONG_TOKEN, maxRetries: 0 }), 30 * MB, 401],
    ['too large', new OpenAI({ baseURL: `${own.baseUrl}/v1`, apiKey: own.token, maxRetries: 0 }), 40 * MB, 413],
    ['rate limited', new OpenAI({ baseURL: `${limited.baseUrl}/v1`, apiKey: limited.token, maxRetries: 0 }), 30 * MB, 429],
  ];
  for (const [what, client, bytes, status] of cases) {
    const error = await client.chat.completions.create({ model: 'gpt-test', messages: huge(bytes) }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof OpenAI.APIError, `${what}: an API error`);
    assert.not.ok(error instanceof OpenAI.APIConnectionError, `${what}: not a connection error (${String((error as Error).cause ?? error)})`);
    assert.is((error as InstanceType<typeof OpenAI.APIError>).status, status, what);
  }
});

/** What a busy client sees: it reads its answer only once it has sent the whole body. */
function assertReadLate(answer: SendingAnswer, bytes: number, status: number, code: string, what: string): void {
  assert.is(answer.error, undefined, `${what}: sending did not fail`);
  assert.is(answer.bytesSent, bytes, `${what}: the whole body was taken`);
  assert.is(answer.status, status, `${what}: the answer was still there to read`);
  assert.is(JSON.parse(answer.body).error.code, code, what);
  assert.is(answer.headers.connection, 'close', what);
}

test('a client that reads its answer only after sending the whole body still reads it', async ({ engram, upstream, agent, limited }) => {
  const own = await engram.createAgent(upstream.url);
  const path = (of: TestAgent) => new URL(of.baseUrl).pathname + '/v1/chat/completions';
  const declared = (bytes: number, token: string) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': String(bytes) });
  const unauthorized = await sendBody(engram.url, { path: path(agent), headers: declared(16 * MB, WRONG_TOKEN), bytes: 16 * MB, readLate: true });
  assertReadLate(unauthorized, 16 * MB, 401, 'unauthorized', '401');
  const tooLarge = await sendBody(engram.url, { path: path(own), headers: declared(40 * MB, own.token), bytes: 40 * MB, readLate: true });
  assertReadLate(tooLarge, 40 * MB, 413, 'body_too_large', '413');
  const limitedAnswer = await sendBody(engram.url, { path: path(limited), headers: declared(16 * MB, limited.token), bytes: 16 * MB, readLate: true });
  assertReadLate(limitedAnswer, 16 * MB, 429, 'rate_limited', '429');
});

test('a client that never stops sending is cut off after the largest body Engram accepts', async ({ small, smallAgent }) => {
  const bytes = 256 * MB;
  const answer = await sendBody(small.url, {
    path: new URL(smallAgent.baseUrl).pathname + '/v1/chat/completions',
    headers: { authorization: `Bearer ${WRONG_TOKEN}`, 'content-type': 'application/json', 'content-length': String(bytes) },
    bytes,
  });
  assert.is(answer.status, 401, 'it read its answer');
  assert.ok(answer.error, 'the server cut the connection');
  // 1 MB is discarded; the rest of the difference is what the sockets' buffers hold.
  assert.ok(answer.bytesSent < 64 * MB, `cut off after ${answer.bytesSent} bytes`);
});

test('a slow-loris body is cut off after the linger time, however steadily it drips', async ({ small, smallAgent }) => {
  const answer = await sendBody(small.url, {
    path: new URL(smallAgent.baseUrl).pathname + '/v1/chat/completions',
    headers: { authorization: `Bearer ${WRONG_TOKEN}`, 'content-type': 'application/json', 'content-length': String(512 * 1024) },
    bytes: 400 * 1024,
    chunkBytes: 1024,
    everyMs: 50,
  });
  assert.is(answer.status, 401);
  assert.ok(answer.endedAfterMs !== undefined && answer.endedAfterMs < 10_000, `the answer was followed by the server's FIN (${answer.endedAfterMs} ms)`);
  assert.ok(answer.error, 'then the server cut the connection');
  const lingered = answer.closedAfterMs! - answer.answeredAfterMs!;
  // The linger time is 2 s; a timer never fires early, and the upper bound leaves a loaded machine room.
  assert.ok(lingered >= 1_900 && lingered < 15_000, `cut ${lingered} ms after the answer`);
  assert.ok(answer.bytesSent < 400 * 1024, 'before the whole body was sent');
});

test('a client that stops sending without closing is let go after 5 s without a byte', async ({ engram, agent }) => {
  const answer = await sendBody(engram.url, {
    path: new URL(agent.baseUrl).pathname + '/v1/chat/completions',
    headers: { authorization: `Bearer ${WRONG_TOKEN}`, 'content-type': 'application/json', 'content-length': String(512 * 1024) },
    bytes: 4 * 1024,
    chunkBytes: 1024,
    everyMs: 7_000,
  });
  assert.is(answer.status, 401);
  assert.ok(answer.error, 'a write after the idle bound finds the connection gone');
  // Well within the 30 s linger time: the idle bound cut it.
  assert.ok(answer.closedAfterMs! < 25_000 && answer.bytesSent < 4 * 1024, `cut off after ${answer.bytesSent} bytes, ${answer.closedAfterMs} ms`);
});

test.run();
