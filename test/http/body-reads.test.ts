/**
 * Issue 15: the bodies read at once for one client address are capped
 * (`ENGRAM_BODIES_PER_ADDRESS`, 16 by default). Beyond the cap a request gets 429 with
 * `Retry-After` in its route's error shape; a slot comes back when a body has been read
 * whole or its connection closed.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { eventually, startEngram, type TestAgent, type TestEngram } from '../support/engram.js';
import { rawRequest, type RawAnswer } from '../support/raw-http.js';

interface Context {
  upstream: ScriptedUpstream;
  engram: TestEngram;
  agent: TestAgent;
  prefix: string;
}
const test = suite<Context>('bodies read per client address');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.engram = await startEngram({ 'bodies-per-address': '2' });
  context.agent = await context.engram.createAgent(context.upstream.url);
  context.prefix = new URL(context.agent.baseUrl).pathname;
});
test.after(async ({ upstream, engram }) => {
  await engram.close();
  await upstream.close();
});

const chatBody = JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'hello' }] });

/** A request whose body is declared but held back for `holdMs`, keeping a slot taken; then the client hangs up. */
function heldBody(engram: TestEngram, agent: TestAgent, prefix: string, holdMs: number): Promise<RawAnswer> {
  return rawRequest(engram.url, {
    path: `${prefix}/v1/chat/completions`,
    headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json', 'content-length': '5000' },
    body: '{"model":"gpt-test",',
    timeoutMs: holdMs,
  });
}

const post = (agent: TestAgent, path: string, headers: Record<string, string>, body: string) =>
  fetch(`${agent.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

test('16 by default', () => {
  assert.is(loadConfig({}, {}).http.bodiesPerAddress, 16);
  assert.is(loadConfig({}, { ENGRAM_BODIES_PER_ADDRESS: '4' }).http.bodiesPerAddress, 4);
});

test('bodies read whole give their slot back: many requests in a row all pass', async ({ agent }) => {
  for (let i = 0; i < 6; i++) {
    const response = await post(agent, '/v1/chat/completions', { authorization: `Bearer ${agent.token}` }, chatBody);
    assert.is(response.status, 200);
    await response.text();
  }
});

test('beyond the cap: 429 with Retry-After in each route\'s shape; a closed connection gives its slot back', async ({ engram, agent, prefix }) => {
  const held = [heldBody(engram, agent, prefix, 1_500), heldBody(engram, agent, prefix, 1_500)];
  await new Promise((resolve) => setTimeout(resolve, 300));

  const chat = await post(agent, '/v1/chat/completions', { authorization: `Bearer ${agent.token}` }, chatBody);
  assert.is(chat.status, 429);
  assert.is(chat.headers.get('retry-after'), '1');
  assert.is((await chat.json()).error.code, 'rate_limited');

  const messages = await post(agent, '/v1/messages', { 'x-api-key': agent.token, 'anthropic-version': '2023-06-01' }, JSON.stringify({ model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }));
  assert.is(messages.status, 429);
  assert.is(messages.headers.get('retry-after'), '1');
  assert.equal(await messages.json(), {
    type: 'error',
    error: { type: 'rate_limit_error', message: 'This address already has 2 request bodies being read (ENGRAM_BODIES_PER_ADDRESS); retry when one is done' },
  });

  const mcp = await post(
    agent,
    '/v0/mcp',
    { authorization: `Bearer ${agent.token}`, accept: 'application/json, text/event-stream' },
    JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  );
  assert.is(mcp.status, 429, 'the MCP endpoint shares the count');
  assert.is(mcp.headers.get('retry-after'), '1');
  assert.is((await mcp.json()).jsonrpc, '2.0');

  const models = await fetch(`${agent.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${agent.token}` } });
  assert.is(models.status, 200, 'a request without a body takes no slot');
  await models.text();

  for (const answer of await Promise.all(held)) assert.is(answer.status, undefined, 'the held requests were waiting for their bodies');
  await eventually(async () => {
    const response = await post(agent, '/v1/chat/completions', { authorization: `Bearer ${agent.token}` }, chatBody);
    await response.text();
    return response.status === 200 ? true : undefined;
  }, 3_000, 'a slot given back');
});

test.run();
