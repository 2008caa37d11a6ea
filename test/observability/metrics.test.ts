/**
 * What a Prometheus scrape of a running Engram shows after real traffic: SDK requests
 * through the proxy to a scripted upstream, an upstream failure, an extraction, an MCP
 * request, a stranger's request. Counters move with bounded labels (route patterns,
 * accepted agent ids), never with raw URLs or tokens.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite, test as single } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import WebSocket from 'ws';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { ADMIN_TOKEN, idle, startEngram, type TestAgent, type TestEngram } from '../support/engram.js';

const test = suite<{ upstream: ScriptedUpstream; engram: TestEngram; agent: TestAgent }>('metrics');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.engram = await startEngram();
  context.agent = await context.engram.createAgent(context.upstream.url);
});

test.after(async ({ upstream, engram }) => {
  await engram.close();
  await upstream.close();
});

async function scrape(engram: TestEngram, headers: Record<string, string> = {}): Promise<string> {
  const response = await fetch(`${engram.url}/metrics`, { headers });
  assert.is(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return response.text();
}

/** The value of the sample of `name` whose labels include `labels` (undefined when there is none). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) return Number(match[3]);
  }
  return undefined;
}

const CHAT_ROUTE = '/v0/orgs/:org/agents/:agent/v1/chat/completions';

test('proxied requests: counted by route pattern, status and agent, with the time Engram added', async ({ engram, upstream, agent }) => {
  const client = new OpenAI({ baseURL: `${agent.baseUrl}/v1`, apiKey: agent.token, maxRetries: 0 });
  upstream.enqueue({ type: 'text', text: 'Hello.' });
  await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Say hello.' }] });
  upstream.enqueue({ type: 'text', text: 'Streamed.' });
  const stream = await client.chat.completions.create({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'Stream it.' }] });
  for await (const _chunk of stream) void _chunk;

  const text = await scrape(engram);
  assert.is(sample(text, 'engram_http_requests_total', { route: CHAT_ROUTE, method: 'POST', status: '200', agent: agent.agentId }), 2);
  assert.is(sample(text, 'engram_proxy_exchanges_total', { agent: agent.agentId, protocol: 'chat-completions', outcome: 'settled' }), 2);
  assert.is(sample(text, 'engram_added_latency_seconds_count', { protocol: 'chat-completions' }), 2);
  const addedSeconds = sample(text, 'engram_added_latency_seconds_sum', { protocol: 'chat-completions' })!;
  assert.ok(addedSeconds > 0 && addedSeconds < 10, `added latency ${addedSeconds}s`);
  assert.not.match(text, agent.token, 'no token in any label');
  assert.not.match(text, `/v0/orgs/${agent.orgId}`, 'no raw URL in any label');
});

test('an upstream failure is counted by agent and kind', async ({ engram, upstream, agent }) => {
  upstream.enqueue({ type: 'error', status: 503 });
  const response = await fetch(`${agent.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'Fail please.' }] }),
  });
  assert.is(response.status, 503);
  await response.text();
  upstream.enqueue({ type: 'break', afterEvents: 2 });
  const broken = await fetch(`${agent.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'Break please.' }] }),
  });
  await broken.text();

  const text = await scrape(engram);
  assert.is(sample(text, 'engram_upstream_errors_total', { agent: agent.agentId, kind: 'status_5xx' }), 1);
  assert.is(sample(text, 'engram_upstream_errors_total', { agent: agent.agentId, kind: 'stream_broken' }), 1);
  assert.is(sample(text, 'engram_http_requests_total', { route: CHAT_ROUTE, status: '503', agent: agent.agentId }), 1);
});

test('extraction jobs: scheduled, started and done are counted, the queue gauge drains; injections are counted', async ({ engram, upstream, agent }) => {
  const before = await scrape(engram);
  const scheduledBefore = sample(before, 'engram_extraction_jobs_scheduled_total') ?? 0;
  const doneBefore = sample(before, 'engram_extraction_jobs_finished_total', { outcome: 'done' }) ?? 0;
  upstream.enqueue({ type: 'text', text: 'Noted.' });
  const answered = await fetch(`${agent.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'REMEMBER: The deploy script lives in tools/deploy.sh.' }] }),
  });
  await answered.text();
  await engram.waitForReflections(agent, 1);
  await idle(engram);

  const after = await scrape(engram);
  assert.ok(sample(after, 'engram_extraction_jobs_scheduled_total')! > scheduledBefore, 'scheduled');
  assert.ok(sample(after, 'engram_extraction_jobs_started_total')! >= 1, 'started');
  assert.ok(sample(after, 'engram_extraction_jobs_finished_total', { outcome: 'done' })! > doneBefore, 'done');
  assert.is(sample(after, 'engram_extraction_jobs_queued', { kind: 'extraction' }), 0);
  assert.is(sample(after, 'engram_extraction_dead_letters', { kind: 'extraction' }), 0);

  upstream.enqueue({ type: 'text', text: 'It is in tools.' });
  const injected = await fetch(`${agent.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'Where does the deploy script live?' }] }),
  });
  const count = Number(injected.headers.get('x-engram-injected'));
  await injected.text();
  assert.ok(count >= 1, 'a reflection was injected');
  assert.is(sample(await scrape(engram), 'engram_injected_reflections_total', { agent: agent.agentId }), count);
});

test('MCP requests are counted by agent and JSON-RPC method', async ({ engram, agent }) => {
  const response = await fetch(`${agent.baseUrl}/v0/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'metrics-test', version: '1' } },
    }),
  });
  assert.is(response.status, 200);
  await response.text();
  const text = await scrape(engram);
  assert.is(sample(text, 'engram_mcp_requests_total', { agent: agent.agentId, method: 'initialize' }), 1);
});

test("a stranger's made-up agent ids never become series", async ({ engram, agent }) => {
  const made = `agt_${'Z'.repeat(16)}`;
  const response = await fetch(`${engram.url}/v0/orgs/${agent.orgId}/agents/${made}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: 'Bearer egm_not-a-real-token-000000000000000000', 'content-type': 'application/json' },
    body: '{}',
  });
  assert.is(response.status, 401);
  await response.text();
  const text = await scrape(engram);
  assert.not.match(text, made);
  assert.ok(sample(text, 'engram_http_requests_total', { route: CHAT_ROUTE, status: '401', agent: '' })! >= 1);
});

test('health and readiness answer without a token', async ({ engram }) => {
  const health = await fetch(`${engram.url}/healthz`);
  assert.is(health.status, 200);
  assert.equal(await health.json(), { status: 'ok' });
  const ready = await fetch(`${engram.url}/readyz`);
  assert.is(ready.status, 200);
  assert.equal(await ready.json(), { status: 'ready', checks: { control: 'ok', reflections: 'ok', bus: 'ok', recording: 'ok' } });
});

test('ENGRAM_METRICS_REQUIRE_ADMIN: /metrics needs the admin token', async () => {
  const engram = await startEngram({ 'metrics-require-admin': 'true' });
  try {
    const open = await fetch(`${engram.url}/metrics`);
    assert.is(open.status, 401);
    await open.text();
    assert.match(await scrape(engram, { authorization: `Bearer ${ADMIN_TOKEN}` }), 'engram_http_requests_total');
    assert.is((await fetch(`${engram.url}/healthz`)).status, 200, 'health stays open');
  } finally {
    await engram.close();
  }
});

test.run();

single('an unreachable upstream and a failing embeddings endpoint are counted; the request that met them still gets its answer or error', async () => {
  // The embeddings endpoint answers, with an error: each search runs on keywords only.
  const embeddings = createServer((_request, response) => void response.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"message":"loading"}}'));
  await new Promise<void>((resolve) => embeddings.listen(0, '127.0.0.1', resolve));
  // A port nobody listens on any more.
  const gone = createServer();
  await new Promise<void>((resolve) => gone.listen(0, '127.0.0.1', resolve));
  const gonePort = (gone.address() as AddressInfo).port;
  await new Promise((resolve) => gone.close(resolve));
  const upstream = await startScriptedUpstream();
  const engram = await startEngram({ 'embeddings-url': `http://127.0.0.1:${(embeddings.address() as AddressInfo).port}`, 'embeddings-model': 'test-embed' });
  try {
    const agent = await engram.createAgent(upstream.url);
    upstream.enqueue({ type: 'text', text: 'Fine.' });
    const degraded = await fetch(`${agent.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'Where is the deploy script?' }] }),
    });
    assert.is(degraded.status, 200, 'a degraded search does not fail the request');
    await degraded.text();

    const lost = await engram.createAgent(`http://127.0.0.1:${gonePort}`);
    const unreachable = await fetch(`${lost.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${lost.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'Anyone there?' }] }),
    });
    assert.is(unreachable.status, 502);
    await unreachable.text();

    const text = await scrape(engram);
    assert.ok(sample(text, 'engram_embedding_failures_total')! >= 1, 'the failed embedding is counted');
    assert.is(sample(text, 'engram_upstream_errors_total', { agent: lost.agentId, kind: 'unreachable' }), 1);
    assert.is(sample(text, 'engram_proxy_exchanges_total', { agent: lost.agentId, outcome: 'failed' }), 1);
  } finally {
    await engram.close();
    await upstream.close();
    await new Promise((resolve) => embeddings.close(resolve));
  }
});

single('probes and scrapes are answered while the process-wide request cap is full', async () => {
  const upstream = await startScriptedUpstream();
  const engram = await startEngram({ 'max-in-flight': '1', 'rate-limit-agent': '1' });
  try {
    const agent = await engram.createAgent(upstream.url);
    const held = new AbortController();
    upstream.enqueue({ type: 'stall', afterEvents: 1 });
    const first = await fetch(`${agent.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'Take your time.' }] }),
      signal: held.signal,
    });
    assert.is(first.status, 200);
    const second = await fetch(`${agent.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'Me too.' }] }),
    });
    assert.is(second.status, 429, 'the caps are full');
    await second.text();
    for (let i = 0; i < 3; i++) {
      for (const path of ['/healthz', '/readyz', '/metrics']) {
        const probe = await fetch(engram.url + path);
        assert.is(probe.status, 200, path);
        await probe.text();
      }
    }
    held.abort();
    await first.body?.cancel().catch(() => undefined);
  } finally {
    await engram.close();
    await upstream.close();
  }
});

single('a Responses WebSocket turn is counted as an exchange of its agent', async () => {
  const upstream = await startScriptedUpstream();
  const engram = await startEngram();
  try {
    const agent = await engram.createAgent(upstream.url);
    upstream.enqueue({ type: 'text', text: 'Over the socket.' });
    const socket = new WebSocket(`${agent.baseUrl.replace(/^http/, 'ws')}/v1/responses`, { headers: { authorization: `Bearer ${agent.token}` } });
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    const completed = new Promise<void>((resolve) =>
      socket.on('message', (data) => {
        if (['response.completed', 'error', 'response.failed'].includes(JSON.parse(String(data)).type)) resolve();
      }),
    );
    socket.send(JSON.stringify({ type: 'response.create', model: 'gpt-test', input: 'Hello over a socket.' }));
    await completed;
    socket.close();
    const text = await scrape(engram);
    assert.is(sample(text, 'engram_proxy_exchanges_total', { agent: agent.agentId, protocol: 'responses', outcome: 'settled' }), 1);
    assert.is(sample(text, 'engram_added_latency_seconds_count', { protocol: 'responses' }), 1);
  } finally {
    await engram.close();
    await upstream.close();
  }
});

single.run();
