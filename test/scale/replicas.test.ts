/**
 * Two Engram replicas on one real nats-server (event bus on JetStream, control stores on
 * KV) sharing the SQLite reflection file, as the tests here run scale-out (DESIGN
 * section 9): they behave as one service. Each test talks to both; none is told which
 * replica holds what.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { eventually, startEngram, type TestAgent, type TestEngram, idle } from '../support/engram.js';
import { natsServerBinary, startNatsServer, type NatsServer } from '../support/nats-server.js';

interface Context {
  nats: NatsServer;
  upstream: ScriptedUpstream;
  dataDir: string;
  a: TestEngram;
  b: TestEngram;
}
const test = suite<Context>('two replicas on one NATS');

test.before(async (context) => {
  if (!natsServerBinary()) throw new Error('nats-server is not installed; .ci/run installs it (apt-get install nats-server)');
  context.nats = await startNatsServer();
  context.upstream = await startScriptedUpstream();
  context.dataDir = mkdtempSync(path.join(tmpdir(), 'engram-replicas-'));
  // Replicas share one secret key (the same data dir here; ENGRAM_SECRET_KEY across hosts).
  const settings = { 'nats-url': context.nats.url, 'nats-prefix': 'replicas', 'settle-ms': '50', 'secret-key': 'ab'.repeat(32) };
  context.a = await startEngram(settings, context.dataDir);
  context.b = await startEngram(settings, context.dataDir);
});
test.after(async ({ a, b, upstream, nats, dataDir }) => {
  await a?.close();
  await b?.close();
  await upstream?.close();
  await nats?.cleanup();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** The agent as replica `engram` serves it (same ids and token, that replica's address). */
const on = (engram: TestEngram, agent: TestAgent): TestAgent => ({
  ...agent,
  baseUrl: `${engram.url}/v0/orgs/${agent.orgId}/agents/${agent.agentId}`,
});

async function chat(agent: TestAgent, content: string, conversation?: string) {
  const response = await fetch(`${agent.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${agent.token}`,
      'content-type': 'application/json',
      ...(conversation ? { 'x-engram-conversation': conversation } : {}),
    },
    body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'system', content: 'You are a coding agent.' }, { role: 'user', content }] }),
  });
  const body = await response.json();
  return { status: response.status, injected: Number(response.headers.get('x-engram-injected') ?? -1), body };
}

test('an agent created on A is served by B at once; learnt through A, injected on B', async ({ a, b, upstream }) => {
  assert.match(a.running.engines.bus, /^nats /);
  assert.match(b.running.engines.control, /^nats /);
  assert.is(b.running.engines.reflections, 'sqlite');
  const agent = await a.createAgent(upstream.url);
  const onB = on(b, agent);
  upstream.enqueue({ type: 'text', text: 'Noted.' });
  assert.is((await chat(agent, 'REMEMBER: The payments service config lives in config/payments.yaml.')).status, 200);
  const [learnt] = await eventually(async () => {
    const listed = await b.reflections(onB);
    return listed.length > 0 ? listed : undefined;
  }, 10_000, 'the reflection, read through B');
  assert.match(learnt.content, 'config/payments.yaml');

  upstream.enqueue({ type: 'text', text: 'In config/payments.yaml.' });
  const asked = await chat(onB, 'Where is the payments service configured?');
  assert.is(asked.status, 200);
  assert.is(asked.injected, 1, 'B injects what A learnt');
  assert.match(JSON.stringify(upstream.conversationRequests().at(-1)!.json), /<engram-reflections>[^]*config\/payments\.yaml/);
});

test('a change made on one replica holds on the other: settings, revocation', async ({ a, b, upstream }) => {
  const agent = await a.createAgent(upstream.url);
  upstream.enqueue({ type: 'text', text: 'ok' });
  assert.is((await chat(on(b, agent), 'hello')).status, 200);
  const patched = await b.api('PATCH', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}`, { name: 'renamed-on-b' });
  assert.is(patched.status, 200);
  await eventually(async () => ((await a.api('GET', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}`)).json.name === 'renamed-on-b' ? true : undefined), 5000, 'the rename on A');

  const tokens = await a.api('GET', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/tokens`);
  const revoked = await a.api('DELETE', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/tokens/${tokens.json.data[0].id}`);
  assert.is(revoked.status, 200);
  await eventually(async () => ((await chat(on(b, agent), 'still there?')).status === 401 ? true : undefined), 5000, 'the revoked token refused by B');
  assert.is((await chat(agent, 'and A?')).status, 401);
});

test('MCP: remembered through A, recalled through B; each request may land anywhere', async ({ a, b, upstream }) => {
  const agent = await a.createAgent(upstream.url);
  const connect = async (engram: TestEngram) => {
    const client = new Client({ name: 'replica-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${on(engram, agent).baseUrl}/v0/mcp`), { requestInit: { headers: { authorization: `Bearer ${agent.token}` } } }),
    );
    return client;
  };
  const onA = await connect(a);
  const onB = await connect(b);
  const remembered = await onA.callTool({ name: 'remember', arguments: { content: 'Integration tests need the docker compose stack up first.', kind: 'procedural', topic: 'testing' } });
  assert.not.ok(remembered.isError);
  const recalled = await onB.callTool({ name: 'recall', arguments: { query: 'what do integration tests need first?' } });
  assert.match(JSON.stringify(recalled.content), 'docker compose stack');
  await onA.close();
  await onB.close();
});

test('a Responses chain started on A continues on B over HTTP', async ({ a, b, upstream }) => {
  const agent = await a.createAgent(upstream.url);
  const client = (engram: TestEngram) => new OpenAI({ baseURL: `${on(engram, agent).baseUrl}/v1`, apiKey: agent.token, maxRetries: 0 });
  upstream.enqueue({ type: 'text', text: 'Berlin is cold today.' }, { type: 'text', text: 'Yes, take a coat.' });
  const first = await client(a).responses.create({ model: 'gpt-test', input: 'What is the weather in Berlin?' });
  const second = await client(b).responses.create({ model: 'gpt-test', previous_response_id: first.id, input: 'Do I need a coat?' });
  assert.is(second.output_text, 'Yes, take a coat.');
  const received = upstream.conversationRequests().at(-1)!.json;
  assert.match(JSON.stringify(received.input), 'What is the weather in Berlin?', 'B expanded the chain A recorded');
  assert.match(JSON.stringify(received.input), 'Berlin is cold today.');
  const read = await fetch(`${on(a, agent).baseUrl}/v1/responses/${second.id}`, { headers: { authorization: `Bearer ${agent.token}` } });
  assert.is(read.status, 200, 'A reads the response B recorded');
  await read.text();
});

test('every conversation is extracted once across both replicas', async ({ a, b, upstream }) => {
  const agent = await a.createAgent(upstream.url);
  const facts = Array.from({ length: 8 }, (_, i) => `Service number ${i} listens on port ${7100 + i}.`);
  upstream.setDefaultReply(() => ({ type: 'text', text: 'Noted.' }));
  try {
    await Promise.all(facts.map((fact, i) => chat(on(i % 2 ? b : a, agent), `REMEMBER: ${fact}`, `conversation-${i}`)));
    const stored = await eventually(async () => {
      const listed = await a.reflections(agent);
      return listed.length >= facts.length ? listed : undefined;
    }, 15_000, 'every fact learnt');
    // Idle: nothing left on the bus, so no extraction can still be on its way.
    await idle(a);
    assert.is(stored.length, facts.length, 'each fact stored once');
    const calls = upstream.extractionRequests().filter((request) => JSON.stringify(request.json).includes('Service number'));
    assert.is(calls.length, facts.length, 'each conversation extracted once');
  } finally {
    upstream.reset();
  }
});

test.run();
