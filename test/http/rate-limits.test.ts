/**
 * Limits on what one tenant may ask, over real HTTP and WebSockets: rates per agent and
 * per token, requests in flight per agent and per process, open WebSockets, and the cap
 * on reflections. Each refusal is a 429 in its surface's own shape with `Retry-After`.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import WebSocket from 'ws';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { eventually, startEngram, type TestAgent, type TestEngram } from '../support/engram.js';

const chatBody = { model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] };

const chat = (agent: TestAgent, token = agent.token, signal?: AbortSignal, body: unknown = chatBody) =>
  fetch(`${agent.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
    signal,
  });

const mcp = (agent: TestAgent, method: string, params: unknown = {}) =>
  fetch(`${agent.baseUrl}/v0/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${agent.token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });

const sessionStart = (agent: TestAgent) =>
  fetch(`${agent.baseUrl}/copilot/session-start`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${agent.token}` },
    body: '{}',
  });

async function assertLimited(response: Response, setting: RegExp): Promise<any> {
  assert.is(response.status, 429);
  const retryAfter = Number(response.headers.get('retry-after'));
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${response.headers.get('retry-after')}`);
  const body = await response.json();
  assert.match(JSON.stringify(body), setting);
  return body;
}

async function withEngram(settings: Record<string, string>, run: (engram: TestEngram, upstream: ScriptedUpstream) => Promise<void>): Promise<void> {
  const upstream = await startScriptedUpstream();
  const engram = await startEngram({ 'settle-ms': '30', ...settings });
  try {
    await run(engram, upstream);
  } finally {
    await engram.close();
    await upstream.close();
  }
}

function openSocket(agent: TestAgent): Promise<{ socket: WebSocket; next: () => Promise<any> } | { status: number; headers: Record<string, unknown>; body: string }> {
  const url = agent.baseUrl.replace(/^http/, 'ws') + '/v1/responses';
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers: { authorization: `Bearer ${agent.token}` } });
    const frames: any[] = [];
    const waiting: Array<(frame: any) => void> = [];
    socket.on('message', (data) => {
      const frame = JSON.parse(String(data));
      const waiter = waiting.shift();
      if (waiter) waiter(frame);
      else frames.push(frame);
    });
    const next = () => (frames.length > 0 ? Promise.resolve(frames.shift()) : new Promise<any>((done) => waiting.push(done)));
    socket.once('open', () => resolve({ socket, next }));
    socket.once('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    socket.once('error', reject);
  });
}

test('per-agent rate: every surface answers 429 in its own shape with Retry-After; other agents go on', () =>
  withEngram({ 'rate-limit-agent': '3' }, async (engram, upstream) => {
    const agent = await engram.createAgent(upstream.url);
    for (let i = 0; i < 3; i++) assert.is((await chat(agent)).status, 200, `request ${i + 1}`);
    const refused = await assertLimited(await chat(agent), /ENGRAM_RATE_LIMIT_AGENT/);
    assert.is(refused.error.type, 'rate_limit_error');
    assert.is(refused.error.code, 'rate_limited');
    assert.match(refused.error.message, /limit of 3 requests a minute \(ENGRAM_RATE_LIMIT_AGENT\); retry in \d+ s/);

    // The SDKs see their own rate-limit errors (no retries, to see the first answer).
    const anthropic = new Anthropic({ baseURL: agent.baseUrl, apiKey: agent.token, maxRetries: 0 });
    const messageError = await anthropic.messages.create({ model: 'claude-test', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }).catch((error) => error);
    assert.instance(messageError, Anthropic.RateLimitError);
    assert.is(messageError.error.error.type, 'rate_limit_error');
    const openai = new OpenAI({ baseURL: `${agent.baseUrl}/v1`, apiKey: agent.token, maxRetries: 0 });
    const responseError = await openai.responses.create({ model: 'gpt-test', input: 'hi' }).catch((error) => error);
    assert.instance(responseError, OpenAI.RateLimitError);

    const rpc = await assertLimited(await mcp(agent, 'tools/list'), /ENGRAM_RATE_LIMIT_AGENT/);
    assert.is(rpc.jsonrpc, '2.0');
    assert.type(rpc.error.code, 'number');
    const hook = await assertLimited(await sessionStart(agent), /ENGRAM_RATE_LIMIT_AGENT/);
    assert.is(hook.error.code, 'rate_limited');
    const upgrade = await openSocket(agent);
    assert.ok('status' in upgrade);
    assert.is(upgrade.status, 429, 'a WebSocket upgrade is a request too');

    const other = await engram.createAgent(upstream.url);
    assert.is((await chat(other)).status, 200, 'another agent is not limited');
    assert.is((await engram.api('GET', '/v0/orgs')).status, 200, 'the admin API is not limited');
  }));

test('the one base URL and the agent\'s own count against the same limits: <engram>/v1 and /v0/mcp are refused once the agent\'s URL used them up', () =>
  withEngram({ 'rate-limit-agent': '3' }, async (engram, upstream) => {
    const agent = await engram.createAgent(upstream.url);
    const short = (path: string, body: unknown) =>
      fetch(`${engram.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${agent.token}` },
        body: JSON.stringify(body),
      });
    assert.is((await chat(agent)).status, 200);
    assert.is((await short('/v1/chat/completions', chatBody)).status, 200);
    assert.is((await chat(agent)).status, 200);
    await assertLimited(await short('/v1/chat/completions', chatBody), /ENGRAM_RATE_LIMIT_AGENT/);
    await assertLimited(await short('/v0/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }), /ENGRAM_RATE_LIMIT_AGENT/);
    const other = await engram.createAgent(upstream.url);
    assert.is((await chat(other)).status, 200, 'another agent is not limited');
  }));

test('per-agent rate over a WebSocket: the upgrade and each response.create count; a refused one gets an error frame and the socket stays', () =>
  withEngram({ 'rate-limit-agent': '4' }, async (engram, upstream) => {
    const agent = await engram.createAgent(upstream.url);
    const opened = await openSocket(agent);
    assert.ok('socket' in opened);
    const create = () => opened.socket.send(JSON.stringify({ type: 'response.create', model: 'gpt-test', input: 'hi', store: false }));
    for (let i = 0; i < 3; i++) {
      upstream.enqueue({ type: 'text', text: `answer ${i}` });
      create();
      let frame;
      do frame = await opened.next();
      while (frame.type !== 'response.completed' && frame.type !== 'error');
      assert.is(frame.type, 'response.completed', `frame ${i + 1}`);
    }
    create();
    const refused = await opened.next();
    assert.is(refused.type, 'error');
    assert.is(refused.error.code, 'rate_limited');
    assert.match(refused.error.message, /ENGRAM_RATE_LIMIT_AGENT[^]*retry in \d+ s/);
    assert.is(opened.socket.readyState, WebSocket.OPEN);
    opened.socket.close();
  }));

test('per-token rate: one token refused, the same agent’s other token goes on; a refusal costs the agent nothing', () =>
  withEngram({ 'rate-limit-token': '2', 'rate-limit-agent': '3' }, async (engram, upstream) => {
    const agent = await engram.createAgent(upstream.url);
    const second = await engram.api('POST', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/tokens`, { name: 'second' });
    assert.is(second.status, 201);
    assert.equal([(await chat(agent)).status, (await chat(agent)).status], [200, 200]);
    for (let i = 0; i < 3; i++) await assertLimited(await chat(agent), /ENGRAM_RATE_LIMIT_TOKEN/);
    assert.is((await chat(agent, second.json.token)).status, 200, 'the refused requests did not use the agent’s rate');
    await assertLimited(await chat(agent, second.json.token), /ENGRAM_RATE_LIMIT_AGENT/);
  }));

test('requests in flight per agent: a second stream waits for the first to end; a WebSocket counts as one', () =>
  withEngram({ 'concurrency-per-agent': '1' }, async (engram, upstream) => {
    const agent = await engram.createAgent(upstream.url);
    const held = new AbortController();
    upstream.enqueue({ type: 'stall', afterEvents: 2 });
    const first = await chat(agent, agent.token, held.signal, { ...chatBody, stream: true });
    assert.is(first.status, 200);
    await assertLimited(await chat(agent), /ENGRAM_CONCURRENCY_PER_AGENT/);
    const other = await engram.createAgent(upstream.url);
    assert.is((await chat(other)).status, 200, 'other agents are not held up');
    held.abort();
    await first.body?.cancel().catch(() => undefined);
    // Released once Engram sees the client go: then the agent may send again.
    await eventually(async () => ((await chat(agent)).status === 200 ? true : undefined), 5_000, 'the slot to be released');

    const opened = await openSocket(agent);
    assert.ok('socket' in opened);
    await assertLimited(await chat(agent), /ENGRAM_CONCURRENCY_PER_AGENT/);
    opened.socket.close();
    await eventually(async () => ((await chat(agent)).status === 200 ? true : undefined), 5_000, 'the socket’s slot to be released');
  }));

test('process-wide caps: requests in flight and open WebSockets, whatever the agent', () =>
  withEngram({ 'max-in-flight': '1', 'max-websockets': '1' }, async (engram, upstream) => {
    const [a, b] = [await engram.createAgent(upstream.url), await engram.createAgent(upstream.url)];
    const held = new AbortController();
    upstream.enqueue({ type: 'stall', afterEvents: 1 });
    const first = await chat(a, a.token, held.signal, { ...chatBody, stream: true });
    assert.is(first.status, 200);
    await assertLimited(await chat(b), /ENGRAM_MAX_IN_FLIGHT/);
    held.abort();
    await first.body?.cancel().catch(() => undefined);
    await eventually(async () => ((await chat(b)).status === 200 ? true : undefined), 5_000, 'the slot to be released');

    const opened = await openSocket(a);
    assert.ok('socket' in opened);
    const refused = await openSocket(b);
    assert.ok('status' in refused);
    assert.is(refused.status, 429);
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    assert.match(refused.body, /ENGRAM_MAX_WEBSOCKETS/);
    opened.socket.close();
    await eventually(async () => {
      const again = await openSocket(b);
      if ('socket' in again) {
        again.socket.close();
        return true;
      }
      return undefined;
    }, 5_000, 'the socket slot to be released');
  }));

test('the reflection cap: remember says the agent is full; nothing more is stored', () =>
  withEngram({ 'max-reflections': '2' }, async (engram, upstream) => {
    const agent = await engram.createAgent(upstream.url);
    const remember = async (content: string) => {
      const reply = await mcp(agent, 'tools/call', { name: 'remember', arguments: { content, kind: 'factual' } });
      assert.is(reply.status, 200);
      return (await reply.json()).result;
    };
    assert.not.ok((await remember('The API listens on port 8080.')).isError);
    assert.not.ok((await remember('Billing lives in services/billing.')).isError);
    const full = await remember('Docs build with mkdocs.');
    assert.is(full.isError, true);
    assert.match(full.content[0].text, /already holds 2 memories, its limit[^]*ENGRAM_MAX_REFLECTIONS/);
    assert.is((await engram.reflections(agent)).length, 2);
  }));

test.run();
