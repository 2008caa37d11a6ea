/**
 * Issue 15: the time a client may take to *send* a request is bounded (Node's
 * `requestTimeout` and `headersTimeout`, settings `ENGRAM_REQUEST_TIMEOUT_MS` and
 * `ENGRAM_HEADERS_TIMEOUT_MS`), and only that: an answer streamed for longer than the
 * request timeout is not cut. Short values here stand for the defaults (300 s, 60 s)
 * against a 30 s stream.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { startEngram, type TestAgent, type TestEngram } from '../support/engram.js';
import { rawRequest } from '../support/raw-http.js';

interface Context {
  upstream: ScriptedUpstream;
  engram: TestEngram;
  agent: TestAgent;
  prefix: string;
}
const test = suite<Context>('request timeouts');

const REQUEST_TIMEOUT_MS = 1_000;
const HEADERS_TIMEOUT_MS = 600;

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.engram = await startEngram({ 'request-timeout-ms': String(REQUEST_TIMEOUT_MS), 'headers-timeout-ms': String(HEADERS_TIMEOUT_MS) });
  context.agent = await context.engram.createAgent(context.upstream.url);
  context.prefix = new URL(context.agent.baseUrl).pathname;
});
test.after(async ({ upstream, engram }) => {
  await engram.close();
  await upstream.close();
});

test('defaults: 60 s for the headers, 300 s for the whole request; both settable, headers within the request', () => {
  const defaults = loadConfig({}, {});
  assert.equal(defaults.http.headersTimeoutMs, 60_000);
  assert.equal(defaults.http.requestTimeoutMs, 300_000);
  const set = loadConfig({ 'request-timeout-ms': '5000' }, { ENGRAM_HEADERS_TIMEOUT_MS: '2000' });
  assert.equal([set.http.requestTimeoutMs, set.http.headersTimeoutMs], [5000, 2000]);
  assert.is(loadConfig({ 'request-timeout-ms': '5000' }, {}).http.headersTimeoutMs, 5000, 'headers default to the request timeout when shorter');
  assert.throws(() => loadConfig({ 'request-timeout-ms': '1000', 'headers-timeout-ms': '2000' }, {}), /must not exceed/);
});

test('a slow-loris body (a byte every 100 ms) is cut after the request timeout', async ({ engram, agent, prefix }) => {
  const answer = await rawRequest(engram.url, {
    path: `${prefix}/v1/chat/completions`,
    headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json', 'content-length': '200' },
    body: '{"model":"gpt-test","messages":[',
    drip: { bytes: 100, everyMs: 100 },
    timeoutMs: 6_000,
  });
  assert.ok(answer.closedByServer, 'the server ended the connection');
  assert.ok(answer.closedAfterMs! < REQUEST_TIMEOUT_MS + 1_500, `cut after ${answer.closedAfterMs} ms`);
  assert.ok(answer.status === undefined || answer.status === 408, `408 or nothing (got ${answer.status})`);
  assert.ok(answer.bodyBytesWritten < 100, `cut before the body was complete (${answer.bodyBytesWritten} bytes)`);
});

test('headers sent a line every 250 ms are cut after the headers timeout', async ({ engram, agent, prefix }) => {
  const padding = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`x-padding-${i}`, 'slow']));
  const answer = await rawRequest(engram.url, {
    method: 'GET',
    path: `${prefix}/v1/models`,
    headers: { authorization: `Bearer ${agent.token}`, ...padding },
    headerDripMs: 250,
    timeoutMs: 6_000,
  });
  assert.ok(answer.closedByServer, 'the server ended the connection');
  assert.ok(answer.closedAfterMs! < HEADERS_TIMEOUT_MS + 1_500, `cut after ${answer.closedAfterMs} ms`);
  assert.ok(answer.status === undefined || answer.status === 408, `408 or nothing (got ${answer.status})`);
});

test('an answer streamed for three times the request timeout is relayed whole', async ({ upstream, agent }) => {
  const text = Array.from({ length: 16 }, (_, i) => `word${i}`).join(' ');
  upstream.enqueue([{ type: 'text', text }, { chunkDelayMs: 700 }]);
  const started = performance.now();
  const response = await fetch(`${agent.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${agent.token}` },
    body: JSON.stringify({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'a long answer please' }] }),
  });
  assert.is(response.status, 200);
  const body = await response.text();
  const took = performance.now() - started;
  assert.ok(took > 3 * REQUEST_TIMEOUT_MS, `the stream lasted ${took} ms`);
  assert.ok(body.includes('data: [DONE]'), 'the stream ended normally');
  const said = body
    .split('\n')
    .filter((line) => line.startsWith('data: {'))
    .map((line) => JSON.parse(line.slice(6)).choices?.[0]?.delta?.content ?? '')
    .join('');
  assert.is(said, text);
});

test.run();
