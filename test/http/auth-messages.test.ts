/**
 * Issue 14: a refused credential is always a 401, and its message says what was seen
 * where that reveals nothing: no token, a provider key, the admin token, a revoked token
 * (to its holder), names where ids belong. A live token of another agent, an unknown
 * token, or a token revoked for another agent all get the same generic answer. Over real
 * HTTP with the OpenAI and Anthropic SDKs, fetch (hooks) and a WebSocket upgrade.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import WebSocket from 'ws';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { ADMIN_TOKEN, startEngram, type TestAgent, type TestEngram } from '../support/engram.js';

interface Context {
  upstream: ScriptedUpstream;
  engram: TestEngram;
  agent: TestAgent;
  other: TestAgent;
}
const test = suite<Context>('what a refused credential is told');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.engram = await startEngram();
  context.agent = await context.engram.createAgent(context.upstream.url);
  context.other = await context.engram.createAgent(context.upstream.url);
});
test.after(async ({ upstream, engram }) => {
  await engram.close();
  await upstream.close();
});

const GENERIC = 'Missing or invalid Engram access token';

async function openAiRefusal(baseUrl: string, apiKey: string): Promise<{ status: number; message: string }> {
  const client = new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey, maxRetries: 0 });
  try {
    await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] });
  } catch (error) {
    if (error instanceof OpenAI.APIError) return { status: error.status ?? 0, message: (error.error as any)?.message ?? '' };
    throw error;
  }
  throw new Error('the request was accepted');
}

async function anthropicRefusal(baseUrl: string, apiKey: string): Promise<{ status: number; message: string }> {
  const client = new Anthropic({ baseURL: baseUrl, apiKey, maxRetries: 0 });
  try {
    await client.messages.create({ model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
  } catch (error) {
    if (error instanceof Anthropic.APIError) {
      const body = error.error as any;
      assert.is(body?.type, 'error', 'the messages-API envelope');
      return { status: error.status ?? 0, message: body?.error?.message ?? '' };
    }
    throw error;
  }
  throw new Error('the request was accepted');
}

async function hookRefusal(agent: { orgId: string; agentId: string }, engram: TestEngram, headers: Record<string, string>) {
  const response = await fetch(`${engram.url}/v0/orgs/${agent.orgId}/agents/${agent.agentId}/transcripts/claude-code`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-ndjson', ...headers },
    body: '{}\n',
  });
  return { status: response.status, message: ((await response.json()) as any).error.message as string };
}

async function mcpRefusal(agent: { baseUrl: string }, headers: Record<string, string>) {
  const response = await fetch(`${agent.baseUrl}/v0/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  const body = (await response.json()) as any;
  assert.is(body.jsonrpc, '2.0', 'the JSON-RPC envelope');
  return { status: response.status, message: body.error.message as string };
}

function upgradeRefusal(engram: TestEngram, agent: TestAgent, headers: Record<string, string>): Promise<{ status: number; message: string }> {
  const url = `${engram.url.replace(/^http/, 'ws')}/v0/orgs/${agent.orgId}/agents/${agent.agentId}/v1/responses`;
  const socket = new WebSocket(url, { headers });
  return new Promise((resolve, reject) => {
    socket.once('open', () => {
      socket.terminate();
      reject(new Error('the upgrade was accepted'));
    });
    socket.once('unexpected-response', (request, response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        request.destroy();
        resolve({ status: response.statusCode ?? 0, message: JSON.parse(Buffer.concat(chunks).toString('utf8')).error.message });
      });
    });
    socket.on('error', () => undefined);
  });
}

test('no token at all: told which headers carry it, on the proxy, the hooks and the WebSocket upgrade', async ({ engram, agent }) => {
  const proxied = await fetch(`${agent.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-test', messages: [] }),
  });
  assert.is(proxied.status, 401);
  assert.match(((await proxied.json()) as any).error.message, /Authorization: Bearer egm_… or X-Engram-Api-Key/);
  const hook = await hookRefusal(agent, engram, {});
  assert.is(hook.status, 401);
  assert.match(hook.message, /Authorization: Bearer egm_…/);
  const upgrade = await upgradeRefusal(engram, agent, {});
  assert.is(upgrade.status, 401);
  assert.match(upgrade.message, /Authorization: Bearer egm_…/);
  const rpc = await mcpRefusal(agent, {});
  assert.is(rpc.status, 401);
  assert.match(rpc.message, /Authorization: Bearer egm_…/);
});

test('a provider key instead of the Engram token is named as such (OpenAI SDK, Anthropic SDK)', async ({ agent }) => {
  const openai = await openAiRefusal(agent.baseUrl, 'sk-proj-abcdefghijklmnop0123456789');
  assert.is(openai.status, 401);
  assert.match(openai.message, /looks like an OpenAI key \(sk-…\).*egm_….*configured on the agent/);
  const anthropic = await anthropicRefusal(agent.baseUrl, 'sk-ant-api03-abcdefghijklmnop0123456789');
  assert.is(anthropic.status, 401);
  assert.match(anthropic.message, /looks like an Anthropic key \(sk-ant-…\).*configured on the agent/);
});

test('the admin token on the proxy is pointed at the management API', async ({ agent, engram }) => {
  const openai = await openAiRefusal(agent.baseUrl, ADMIN_TOKEN);
  assert.is(openai.status, 401);
  assert.match(openai.message, /admin token is for the management API.*agent token/);
  const upgrade = await upgradeRefusal(engram, agent, { authorization: `Bearer ${ADMIN_TOKEN}` });
  assert.is(upgrade.status, 401);
  assert.match(upgrade.message, /admin token/);
  const rpc = await mcpRefusal(agent, { authorization: `Bearer ${ADMIN_TOKEN}` });
  assert.is(rpc.status, 401);
  assert.match(rpc.message, /admin token is for the management API/);
});

test('an admin token configured in another shape (openssl rand -hex 32) is named too', async ({ upstream }) => {
  const configured = 'f3a1c9d27b845e60a1d3c5e7f9b0a2c4d6e8f0a1b3c5d7e9f1a2b4c6d8e0f2a4';
  const engram = await startEngram({ 'admin-token': configured });
  try {
    const created = await engram.api('POST', '/v0/orgs', { name: 'hex' }, configured);
    assert.is(created.status, 201);
    const agent = await engram.api('POST', `/v0/orgs/${created.json.id}/agents`, { name: 'bot', upstream: { base_url: upstream.url, api_key: 'sk-x' } }, configured);
    assert.is(agent.status, 201, JSON.stringify(agent.json));
    const refused = await openAiRefusal(agent.json.base_url, configured);
    assert.is(refused.status, 401);
    assert.match(refused.message, /admin token is for the management API/);
    const rpc = await mcpRefusal({ baseUrl: agent.json.base_url }, { authorization: `Bearer ${configured}` });
    assert.match(rpc.message, /admin token/);
  } finally {
    await engram.close();
  }
});

test('a revoked token is told so on its own agent, and gets the generic answer elsewhere', async ({ engram, agent, other }) => {
  const created = await engram.api('POST', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/tokens`, { name: 'laptop' });
  assert.is(created.status, 201, JSON.stringify(created.json));
  const revoked = await engram.api('DELETE', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/tokens/${created.json.id}`);
  assert.is(revoked.status, 200);
  const own = await anthropicRefusal(agent.baseUrl, created.json.token);
  assert.is(own.status, 401);
  assert.match(own.message, /this token was revoked/i);
  const hook = await hookRefusal(agent, engram, { 'x-engram-api-key': created.json.token });
  assert.match(hook.message, /revoked/);
  // On another agent's path the revoked token is just an unknown one.
  const elsewhere = await openAiRefusal(other.baseUrl, created.json.token);
  assert.equal(elsewhere, { status: 401, message: GENERIC });
  // On the one base URL the token names no other agent: its holder is told it was revoked.
  const short = await openAiRefusal(engram.url, created.json.token);
  assert.is(short.status, 401);
  assert.match(short.message, /this token was revoked/i);
  const shortAnthropic = await anthropicRefusal(engram.url, created.json.token);
  assert.match(shortAnthropic.message, /this token was revoked/i);
});

test('names where ids belong: told the id prefixes and where the ids came from', async ({ engram, agent }) => {
  const base = `${engram.url}/v0/orgs`;
  const byOrgName = await openAiRefusal(`${base}/acme/agents/${agent.agentId}`, agent.token);
  assert.is(byOrgName.status, 401);
  assert.match(byOrgName.message, /org ids start with org_.*ids that `engram agent create` printed/);
  const byAgentName = await anthropicRefusal(`${base}/${agent.orgId}/agents/coder`, agent.token);
  assert.is(byAgentName.status, 401);
  assert.match(byAgentName.message, /agent ids start with agt_.*`engram agent create`/);
});

test("another agent's live token reveals nothing: the same answer as a token never issued", async ({ engram, agent, other }) => {
  const never = 'egm_' + 'x'.repeat(43);
  const answers = [
    await openAiRefusal(agent.baseUrl, other.token),
    await openAiRefusal(agent.baseUrl, never),
    // The other agent's token in the other agent's org, on this agent's id: still nothing.
    await openAiRefusal(`${engram.url}/v0/orgs/${other.orgId}/agents/${agent.agentId}`, other.token),
  ];
  for (const answer of answers) assert.equal(answer, { status: 401, message: GENERIC });
  const anthropic = [await anthropicRefusal(agent.baseUrl, other.token), await anthropicRefusal(agent.baseUrl, never)];
  assert.equal(anthropic[0], anthropic[1]);
  assert.equal(await hookRefusal(agent, engram, { authorization: `Bearer ${other.token}` }), { status: 401, message: GENERIC });
  assert.equal(await upgradeRefusal(engram, agent, { authorization: `Bearer ${other.token}` }), { status: 401, message: GENERIC });
  assert.equal(await mcpRefusal(agent, { authorization: `Bearer ${other.token}` }), { status: 401, message: GENERIC });
});

test.run();
