/**
 * Issue 15: a request nesting arrays 100 000 deep used to overflow the stack of the
 * recursive walks over it (`stableJson`) and get a 500. Nesting is bounded where bodies
 * are parsed (`MAX_JSON_DEPTH`): 400 in the protocol's own envelope, and the server
 * keeps serving.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_JSON_DEPTH } from '../../src/protocols/shared.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { startEngram, type TestAgent, type TestEngram } from '../support/engram.js';

interface Context {
  upstream: ScriptedUpstream;
  engram: TestEngram;
  agent: TestAgent;
}
const test = suite<Context>('deeply nested JSON');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.engram = await startEngram();
  context.agent = await context.engram.createAgent(context.upstream.url);
});
test.after(async ({ upstream, engram }) => {
  await engram.close();
  await upstream.close();
});

/** `[[[...]]]`, `depth` levels, as JSON text. */
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const DEEP = nested(100_000);

const post = (agent: TestAgent, path: string, headers: Record<string, string>, body: string) =>
  fetch(`${agent.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

test('100 000 levels in a message: 400 in each protocol\'s envelope, not 500', async ({ agent }) => {
  const chat = await post(agent, '/v1/chat/completions', { authorization: `Bearer ${agent.token}` }, `{"model":"gpt-test","messages":[{"role":"user","content":${DEEP}}]}`);
  assert.is(chat.status, 400);
  const chatError = (await chat.json()).error;
  assert.is(chatError.type, 'invalid_request_error');
  assert.match(chatError.message, `nested deeper than ${MAX_JSON_DEPTH} levels`);

  const messages = await post(
    agent,
    '/v1/messages',
    { 'x-api-key': agent.token, 'anthropic-version': '2023-06-01' },
    `{"model":"claude-test","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":"hi","extra":${DEEP}}]}]}`,
  );
  assert.is(messages.status, 400);
  const messagesError = await messages.json();
  assert.equal([messagesError.type, messagesError.error.type], ['error', 'invalid_request_error']);

  const responses = await post(agent, '/v1/responses', { authorization: `Bearer ${agent.token}` }, `{"model":"gpt-test","input":${DEEP}}`);
  assert.is(responses.status, 400);
  assert.is((await responses.json()).error.type, 'invalid_request_error');
});

test('a request nested as deep as allowed still goes through', async ({ agent }) => {
  // Five levels above it: the body, its `messages`, the message, its content list, the part.
  const content = nested(MAX_JSON_DEPTH - 5);
  const response = await post(agent, '/v1/chat/completions', { authorization: `Bearer ${agent.token}` }, `{"model":"gpt-test","messages":[{"role":"user","content":[{"type":"text","text":"deep","extra":${content}}]}]}`);
  assert.is(response.status, 200, await response.clone().text());
  await response.text();
});

test('the MCP endpoint answers a JSON-RPC parse error', async ({ agent }) => {
  const response = await post(
    agent,
    '/v0/mcp',
    { authorization: `Bearer ${agent.token}`, accept: 'application/json, text/event-stream' },
    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"recall","arguments":{"query":${DEEP}}}}`,
  );
  assert.is(response.status, 400);
  const body = await response.json();
  assert.is(body.error.code, -32700);
  assert.match(body.error.message, 'nested deeper than');
});

test('the server keeps serving', async ({ agent }) => {
  const response = await post(agent, '/v1/chat/completions', { authorization: `Bearer ${agent.token}` }, JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'still there?' }] }));
  assert.is(response.status, 200);
  await response.text();
});

test.run();
