/**
 * The official SDKs get through Engram exactly what they get from the upstream itself,
 * and the upstream sees the same request (Engram's own key instead of the client's).
 */
import http from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startScriptedUpstream, type Reply, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { startEngram, type TestAgent, type TestEngram } from '../support/engram.js';

const UPSTREAM_KEY = 'sk-upstream-secret-key-0000000000000000';
const test = suite<{ upstream: ScriptedUpstream; engram: TestEngram; agent: TestAgent }>('proxy through SDKs');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.engram = await startEngram();
  context.agent = await context.engram.createAgent(context.upstream.url, { upstreamKey: UPSTREAM_KEY });
});

test.after(async ({ upstream, engram }) => {
  await engram.close();
  await upstream.close();
});

/** Runs `call` against the upstream directly and through Engram with the same scripted reply. */
async function both<T>(
  { upstream }: { upstream: ScriptedUpstream },
  reply: Reply,
  call: (direct: boolean) => Promise<T>,
): Promise<{ direct: T; proxied: T; directRequest: any; proxiedRequest: any }> {
  upstream.enqueue(reply);
  const direct = await call(true);
  const directRequest = upstream.conversationRequests().at(-1)!;
  upstream.enqueue(reply);
  const proxied = await call(false);
  const proxiedRequest = upstream.conversationRequests().at(-1)!;
  return { direct, proxied, directRequest, proxiedRequest };
}

function openai(context: { upstream: ScriptedUpstream; agent: TestAgent }, direct: boolean): OpenAI {
  return direct
    ? new OpenAI({ baseURL: `${context.upstream.url}/v1`, apiKey: UPSTREAM_KEY, maxRetries: 0 })
    : new OpenAI({ baseURL: `${context.agent.baseUrl}/v1`, apiKey: context.agent.token, maxRetries: 0 });
}

function anthropic(context: { upstream: ScriptedUpstream; agent: TestAgent }, direct: boolean): Anthropic {
  return direct
    ? new Anthropic({ baseURL: context.upstream.url, apiKey: UPSTREAM_KEY, maxRetries: 0 })
    : new Anthropic({ baseURL: context.agent.baseUrl, apiKey: context.agent.token, maxRetries: 0 });
}

function sameUpstreamRequest(directRequest: any, proxiedRequest: any) {
  assert.equal(proxiedRequest.json, directRequest.json, 'the upstream receives the body the client sent');
  const auth = proxiedRequest.headers.authorization ?? proxiedRequest.headers['x-api-key'];
  assert.ok(String(auth).includes(UPSTREAM_KEY), 'Engram authenticates with the agent key');
  assert.not.ok(JSON.stringify(proxiedRequest.headers).includes('egm_'), 'the Engram token never reaches the upstream');
}

const tools = [
  {
    type: 'function' as const,
    function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
  },
];

test('openai chat completions, non-streaming, with a tool call', async (context) => {
  const result = await both(context, { type: 'tool_call', name: 'get_weather', arguments: { city: 'Paris' } }, (direct) =>
    openai(context, direct).chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools,
    }),
  );
  assert.equal(result.proxied, result.direct);
  assert.is(result.proxied.choices[0].message.tool_calls?.[0]?.type, 'function');
  sameUpstreamRequest(result.directRequest, result.proxiedRequest);
});

test('openai chat completions, streaming, text and tool call chunks', async (context) => {
  for (const reply of [{ type: 'text', text: 'Streaming works nicely here.' }, { type: 'tool_call', name: 'get_weather', arguments: { city: 'Oslo' } }] as Reply[]) {
    const result = await both(context, reply, async (direct) => {
      const stream = await openai(context, direct).chat.completions.create({
        model: 'gpt-test',
        messages: [{ role: 'user', content: 'Tell me something' }],
        tools,
        stream: true,
        stream_options: { include_usage: true },
      });
      const chunks = [];
      for await (const chunk of stream) chunks.push(chunk);
      return chunks;
    });
    assert.ok(result.proxied.length > 2);
    assert.equal(result.proxied, result.direct);
    sameUpstreamRequest(result.directRequest, result.proxiedRequest);
  }
});

test('openai SDK sees x-engram-injected on the raw response', async (context) => {
  context.upstream.enqueue({ type: 'text', text: 'hello' });
  const { response } = await openai(context, false)
    .chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi there' }] })
    .withResponse();
  assert.is(response.headers.get('x-engram-injected'), '0');
});

test('anthropic messages, non-streaming, with tool_use and thinking', async (context) => {
  for (const reply of [
    { type: 'tool_call', name: 'get_weather', arguments: { city: 'Rome' }, text: 'Let me look.' },
    { type: 'text', text: 'It is sunny.', thinking: 'The user wants weather.' },
  ] as Reply[]) {
    const result = await both(context, reply, (direct) =>
      anthropic(context, direct).messages.create({
        model: 'claude-test',
        max_tokens: 1024,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        tools: [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
        messages: [{ role: 'user', content: 'Weather in Rome?' }],
      }),
    );
    assert.equal(result.proxied, result.direct);
    sameUpstreamRequest(result.directRequest, result.proxiedRequest);
  }
});

test('anthropic messages, streaming events and final message', async (context) => {
  for (const reply of [
    { type: 'text', text: 'A streamed answer with several words in it.', thinking: 'Thinking first.' },
    { type: 'tool_call', name: 'get_weather', arguments: { city: 'Lima' } },
  ] as Reply[]) {
    const result = await both(context, reply, async (direct) => {
      const stream = anthropic(context, direct).messages.stream({
        model: 'claude-test',
        max_tokens: 1024,
        messages: [{ role: 'user', content: 'Stream please' }],
      });
      const events: unknown[] = [];
      stream.on('streamEvent', (event) => events.push(event));
      const final = await stream.finalMessage();
      return { events, final };
    });
    assert.ok(result.proxied.events.length > 3);
    assert.equal(result.proxied, result.direct);
    sameUpstreamRequest(result.directRequest, result.proxiedRequest);
  }
});

test('SSE bytes reach the client unchanged', async (context) => {
  const body = JSON.stringify({ model: 'claude-test', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'bytes' }] });
  const reply: Reply = { type: 'text', text: 'Exactly these bytes, please.' };
  const result = await both(context, reply, async (direct) => {
    const response = await fetch(direct ? `${context.upstream.url}/v1/messages` : `${context.agent.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': direct ? UPSTREAM_KEY : context.agent.token, 'anthropic-version': '2023-06-01' },
      body,
    });
    return { status: response.status, type: response.headers.get('content-type'), bytes: Buffer.from(await response.arrayBuffer()).toString('base64') };
  });
  assert.equal(result.proxied, result.direct);
});

test('an upstream error passes through with its status and body', async (context) => {
  const reply: Reply = { type: 'error', status: 429, body: { error: { message: 'slow down', type: 'rate_limit_error', code: 'rate_limited', param: null } } };
  const result = await both(context, reply, async (direct) => {
    try {
      await openai(context, direct).chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }] });
      return undefined;
    } catch (error) {
      const e = error as { status: number; error: unknown };
      return { status: e.status, error: e.error };
    }
  });
  assert.equal(result.proxied, { status: 429, error: { message: 'slow down', type: 'rate_limit_error', code: 'rate_limited', param: null } });
  assert.equal(result.proxied, result.direct);
});

const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

test('images reach the upstream as the client sent them, in both protocols', async (context) => {
  const chat = await both(context, { type: 'text', text: 'A single pixel.' }, (direct) =>
    openai(context, direct).chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PIXEL}` } }] }],
    }),
  );
  assert.equal(chat.proxied, chat.direct);
  sameUpstreamRequest(chat.directRequest, chat.proxiedRequest);
  const messages = await both(context, { type: 'text', text: 'A single pixel.' }, (direct) =>
    anthropic(context, direct).messages.create({
      model: 'claude-test',
      max_tokens: 64,
      messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PIXEL } }, { type: 'text', text: 'What is this?' }] }],
    }),
  );
  assert.equal(messages.proxied, messages.direct);
  sameUpstreamRequest(messages.directRequest, messages.proxiedRequest);
});

test('protocol headers pass through; hop-by-hop headers and the client key do not', async (context) => {
  context.upstream.enqueue({ type: 'text', text: 'ok' });
  // node:http, because fetch refuses to send a Connection header.
  const status = await new Promise<number>((resolve, reject) => {
    const body = JSON.stringify({ model: 'claude-test', max_tokens: 16, messages: [{ role: 'user', content: 'headers' }] });
    const request = http.request(`${context.agent.baseUrl}/v1/messages?beta=true`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'anthropic-version': '2023-06-01',
        'anthropic-beta': 'interleaved-thinking-2025-05-14,context-management-2025-06-27',
        'x-api-key': 'sk-ant-the-clients-own-key',
        'x-engram-api-key': context.agent.token,
        'x-claude-code-session-id': 'session-1',
        connection: 'keep-alive, x-hop',
        'x-hop': 'only for the next hop',
      },
    }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('error', reject);
    request.end(body);
  });
  assert.is(status, 200);
  const seen = context.upstream.conversationRequests().at(-1)!;
  assert.is(seen.path, '/v1/messages?beta=true', 'the query string is kept');
  assert.is(seen.headers['anthropic-beta'], 'interleaved-thinking-2025-05-14,context-management-2025-06-27');
  assert.is(seen.headers['anthropic-version'], '2023-06-01');
  assert.is(seen.headers['x-claude-code-session-id'], 'session-1');
  assert.is(seen.headers['x-api-key'], UPSTREAM_KEY, "the agent's key replaces the client's");
  assert.is(seen.headers['x-hop'], undefined);
  assert.is(seen.headers['x-engram-api-key'], undefined);
  assert.not.ok(JSON.stringify(seen.headers).includes('sk-ant-the-clients-own-key'));
});

test('count_tokens and models pass through; the HEAD warm-up is answered', async (context) => {
  const client = anthropic(context, false);
  const counted = await client.messages.countTokens({ model: 'claude-test', messages: [{ role: 'user', content: 'count me' }] });
  assert.type(counted.input_tokens, 'number');
  const models = await openai(context, false).models.list();
  assert.ok(models.data.length > 0);
  const head = await fetch(`${context.agent.baseUrl}/`, { method: 'HEAD' });
  assert.is(head.status, 200);
});

test.run();
