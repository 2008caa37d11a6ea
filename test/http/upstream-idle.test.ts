/**
 * Issue 15: an upstream that stalls mid-answer is given up on after
 * `ENGRAM_UPSTREAM_IDLE_TIMEOUT_MS` of silence (60 s by default), not after the long
 * `ENGRAM_UPSTREAM_TIMEOUT_MS` (600 s, the wait for headers, which a non-streamed answer
 * only sends once generated; a streamed one sends them at once, so it waits only the idle
 * timeout for them). The client gets the protocol's error event mid-stream, or
 * 504 when nothing came at all; an answer that keeps flowing may run past both.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { startEngram, type TestAgent, type TestEngram } from '../support/engram.js';

interface Context {
  upstream: ScriptedUpstream;
  engram: TestEngram;
  agent: TestAgent;
}
const test = suite<Context>('upstream idle timeout');

const TOTAL_MS = 3_000;
const IDLE_MS = 300;

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.engram = await startEngram({ 'upstream-timeout-ms': String(TOTAL_MS), 'upstream-idle-timeout-ms': String(IDLE_MS) });
  context.agent = await context.engram.createAgent(context.upstream.url);
});
test.after(async ({ upstream, engram }) => {
  await engram.close();
  await upstream.close();
});

const chat = (agent: TestAgent, stream: boolean) =>
  fetch(`${agent.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${agent.token}` },
    body: JSON.stringify({ model: 'gpt-test', stream, messages: [{ role: 'user', content: 'tell me a story' }] }),
  });

test('60 s by default, settable', () => {
  assert.is(loadConfig({}, {}).upstreamIdleTimeoutMs, 60_000);
  assert.is(loadConfig({}, {}).upstreamTimeoutMs, 600_000);
  assert.is(loadConfig({}, { ENGRAM_UPSTREAM_IDLE_TIMEOUT_MS: '5000' }).upstreamIdleTimeoutMs, 5000);
});

test('a stream that stalls after two events ends with the error event after the idle timeout', async ({ upstream, agent }) => {
  upstream.enqueue({ type: 'stall', afterEvents: 2 });
  const started = performance.now();
  const response = await chat(agent, true);
  assert.is(response.status, 200);
  const text = await response.text();
  const took = performance.now() - started;
  assert.ok(took >= IDLE_MS && took < TOTAL_MS / 2, `ended after ${took} ms`);
  const frames = text.split('\n\n').filter(Boolean);
  assert.ok(frames.length >= 3, 'the events sent before the stall were relayed');
  const last = JSON.parse(frames[frames.length - 1].replace(/^data: /, ''));
  assert.is(last.error.code, 'upstream_timeout');
});

test('messages: the stalled stream ends with an `error` event of type timeout_error', async ({ upstream, agent }) => {
  upstream.enqueue({ type: 'stall', afterEvents: 3 });
  const started = performance.now();
  const response = await fetch(`${agent.baseUrl}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': agent.token, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: 'claude-test', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  });
  const text = await response.text();
  assert.ok(performance.now() - started < TOTAL_MS / 2);
  const last = text.split('\n\n').filter(Boolean).pop()!;
  assert.match(last, /^event: error\n/);
  assert.is(JSON.parse(last.split('\ndata: ')[1]).error.type, 'timeout_error');
});

test('an answer that keeps flowing (a chunk every 150 ms) runs past the idle timeout unharmed', async ({ upstream, agent }) => {
  upstream.enqueue([{ type: 'text', text: 'one two three four five six seven eight' }, { chunkDelayMs: 150 }]);
  const started = performance.now();
  const response = await chat(agent, true);
  const text = await response.text();
  assert.ok(performance.now() - started > 3 * IDLE_MS, 'longer than the idle timeout');
  assert.ok(text.includes('data: [DONE]'));
  assert.not.ok(text.includes('"error"'));
});

test('a non-streamed answer that stalls mid-body is cut after the idle timeout', async ({ upstream, agent }) => {
  upstream.enqueue({ type: 'stall', afterEvents: 0 });
  const started = performance.now();
  const outcome = await chat(agent, false).then(
    (response) => response.text().then(() => 'whole', () => 'cut'),
    () => 'cut',
  );
  assert.is(outcome, 'cut');
  assert.ok(performance.now() - started < TOTAL_MS / 2);
});

test('a streamed request whose upstream never sends headers gets 504 after the idle timeout', async ({ upstream, agent }) => {
  upstream.enqueue({ type: 'hang' });
  const started = performance.now();
  const response = await chat(agent, true);
  assert.is(response.status, 504);
  assert.is((await response.json()).error.code, 'upstream_timeout');
  const took = performance.now() - started;
  assert.ok(took >= IDLE_MS - 50 && took < TOTAL_MS / 2, `504 after ${took.toFixed(0)} ms`);
});

test('a request answered whole may wait the long headers timeout (the provider sends nothing until done)', async ({ upstream, agent }) => {
  upstream.enqueue({ type: 'hang' });
  const started = performance.now();
  const response = await chat(agent, false);
  assert.is(response.status, 504);
  assert.is((await response.json()).error.code, 'upstream_timeout');
  assert.ok(performance.now() - started >= TOTAL_MS - 100);
});

test.run();
