/**
 * Issue 14: a 413 names the limit and the setting that raises it, in each surface's own
 * envelope: the proxy through the OpenAI and Anthropic SDKs (ENGRAM_BODY_LIMIT), the
 * management API (its own fixed limit, with the figure). Real Engram over real HTTP.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { startEngram, type TestAgent, type TestEngram } from '../support/engram.js';

interface Context {
  upstream: ScriptedUpstream;
  engram: TestEngram;
  agent: TestAgent;
}
const test = suite<Context>('413 names the limit');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.engram = await startEngram({ 'body-limit': '4096' });
  context.agent = await context.engram.createAgent(context.upstream.url);
});
test.after(async ({ upstream, engram }) => {
  await engram.close();
  await upstream.close();
});

const LARGE = 'x'.repeat(8_000);

test('the proxy: OpenAI SDK sees a 413 naming ENGRAM_BODY_LIMIT', async ({ agent }) => {
  const client = new OpenAI({ baseURL: `${agent.baseUrl}/v1`, apiKey: agent.token, maxRetries: 0 });
  try {
    await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: LARGE }] });
    assert.unreachable('accepted');
  } catch (error) {
    assert.instance(error, OpenAI.APIError);
    const apiError = error as InstanceType<typeof OpenAI.APIError>;
    assert.is(apiError.status, 413);
    assert.is((apiError.error as any).code, 'body_too_large');
    assert.match((apiError.error as any).message, /^The request body is larger than the limit of 4 KiB \(4096 bytes\); ENGRAM_BODY_LIMIT raises it$/);
  }
});

test('the proxy: Anthropic SDK sees request_too_large naming ENGRAM_BODY_LIMIT', async ({ agent }) => {
  const client = new Anthropic({ baseURL: agent.baseUrl, apiKey: agent.token, maxRetries: 0 });
  try {
    await client.messages.create({ model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: LARGE }] });
    assert.unreachable('accepted');
  } catch (error) {
    assert.instance(error, Anthropic.APIError);
    const apiError = error as InstanceType<typeof Anthropic.APIError>;
    assert.is(apiError.status, 413);
    const body = apiError.error as any;
    assert.is(body.error.type, 'request_too_large');
    assert.match(body.error.message, /limit of 4 KiB \(4096 bytes\); ENGRAM_BODY_LIMIT raises it/);
  }
});

test('the management API names its own limit with the figure', async ({ engram }) => {
  const answer = await engram.api('POST', '/v0/orgs', { name: 'big', padding: LARGE });
  assert.is(answer.status, 413);
  assert.match(answer.json.error.message, /^The management request body is larger than the limit of 4 KiB \(4096 bytes\)$/);
});

test('MCP names its fixed limit in a JSON-RPC error', async ({ agent }) => {
  const response = await fetch(`${agent.baseUrl}/v0/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${agent.token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { padding: 'x'.repeat(5 * 1024 * 1024) } }),
  });
  assert.is(response.status, 413);
  const body = (await response.json()) as any;
  assert.is(body.jsonrpc, '2.0');
  assert.match(body.error.message, /^The MCP request body is larger than the limit of 4 MiB \(4194304 bytes\)$/);
});

test.run();
