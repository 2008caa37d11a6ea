/**
 * One base URL for every agent (DESIGN section 4): `<engram>/v1` serves the agent the
 * token belongs to, as the agent's own base URL does, through the real `openai` and
 * `@anthropic-ai/sdk` clients, the Responses WebSocket and the MCP SDK client on
 * `/v0/mcp`; two agents' tokens on the same URL each reach only their own memory.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import WebSocket, { type RawData } from 'ws';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { startEngram, type TestAgent, type TestEngram } from '../support/engram.js';
import { rawRequest } from '../support/raw-http.js';

interface Context {
  upstream: ScriptedUpstream;
  engram: TestEngram;
  /** Two agents in two organisations, both reached at `<engram>/v1`. */
  alice: TestAgent;
  bob: TestAgent;
}
const test = suite<Context>('one base URL');

const FACT = 'The deploy script lives in tools/deploy.sh and needs the staging profile.';

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.engram = await startEngram({ 'settle-ms': '50' });
  context.alice = await context.engram.createAgent(context.upstream.url);
  context.bob = await context.engram.createAgent(context.upstream.url);
  // Alice learns a fact on the short URL; every test below may ask for it.
  const sdk = openai(context.engram, context.alice);
  context.upstream.enqueue({ type: 'text', text: 'Noted, I will keep that in mind.' });
  await sdk.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: `REMEMBER: ${FACT}` }] });
  await context.engram.waitForReflections(context.alice);
});
test.after(async ({ upstream, engram }) => {
  await engram.close();
  await upstream.close();
});

function openai(engram: TestEngram, agent: TestAgent): OpenAI {
  return new OpenAI({ baseURL: `${engram.url}/v1`, apiKey: agent.token, maxRetries: 0 });
}

/** The Anthropic SDK appends `/v1/messages` itself: its base URL is the server's. */
function anthropic(engram: TestEngram, agent: TestAgent): Anthropic {
  return new Anthropic({ baseURL: engram.url, apiKey: agent.token, maxRetries: 0 });
}

const lastForwarded = (upstream: ScriptedUpstream) => JSON.stringify(upstream.conversationRequests().at(-1)!.json);
const REFLECTION_BLOCK = /<engram-reflections>[^]*tools\/deploy\.sh[^]*<\/engram-reflections>/;

test('openai chat completions on <engram>/v1: the token\'s agent gets its memory injected, another agent\'s token does not', async ({ engram, upstream, alice, bob }) => {
  upstream.enqueue({ type: 'text', text: 'Run tools/deploy.sh.' });
  const mine = await openai(engram, alice)
    .chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Where is the deploy script kept?' }] })
    .withResponse();
  assert.is(mine.data.choices[0]!.message.content, 'Run tools/deploy.sh.');
  assert.ok(Number(mine.response.headers.get('x-engram-injected')) >= 1, 'alice\'s reflection is injected');
  assert.match(lastForwarded(upstream), REFLECTION_BLOCK);

  upstream.enqueue({ type: 'text', text: 'I do not know.' });
  const theirs = await openai(engram, bob)
    .chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Where is the deploy script kept?' }] })
    .withResponse();
  assert.is(theirs.response.headers.get('x-engram-injected'), '0', 'bob has no reflections of his own');
  assert.not.match(lastForwarded(upstream), /tools\/deploy\.sh/, 'alice\'s memory never reaches bob\'s request');
  assert.is((await engram.reflections(bob)).length, 0);
});

test('openai chat completions streamed on <engram>/v1', async ({ engram, upstream, alice }) => {
  upstream.enqueue({ type: 'text', text: 'Streamed through the short URL.' });
  const stream = await openai(engram, alice).chat.completions.create({
    model: 'gpt-test',
    messages: [{ role: 'user', content: 'Where is the deploy script kept?' }],
    stream: true,
  });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
  assert.is(text, 'Streamed through the short URL.');
  assert.match(lastForwarded(upstream), REFLECTION_BLOCK);
});

test('anthropic messages (JSON and streamed), count_tokens and models on <engram>', async ({ engram, upstream, alice }) => {
  const sdk = anthropic(engram, alice);
  upstream.enqueue({ type: 'text', text: 'In tools/deploy.sh.' });
  const answer = await sdk.messages
    .create({ model: 'claude-test', max_tokens: 256, messages: [{ role: 'user', content: 'Where is the deploy script kept?' }] })
    .withResponse();
  assert.equal(answer.data.content, [{ type: 'text', text: 'In tools/deploy.sh.' }]);
  assert.ok(Number(answer.response.headers.get('x-engram-injected')) >= 1);
  assert.match(lastForwarded(upstream), REFLECTION_BLOCK);

  upstream.enqueue({ type: 'text', text: 'Streamed.' });
  const streamed = await sdk.messages
    .stream({ model: 'claude-test', max_tokens: 256, messages: [{ role: 'user', content: 'Where is the deploy script kept?' }] })
    .finalMessage();
  assert.equal(streamed.content, [{ type: 'text', text: 'Streamed.' }]);

  const counted = await sdk.messages.countTokens({ model: 'claude-test', messages: [{ role: 'user', content: 'count me' }] });
  assert.ok(counted.input_tokens > 0);
  const models = await sdk.models.list();
  assert.ok(models.data.length > 0);
  // The last models request: the two conversations' extraction calls may come after it.
  const listed = upstream.requests.filter((request) => request.path.startsWith('/v1/models')).at(-1);
  assert.is(listed?.headers['anthropic-version'] !== undefined, true, 'the models list was asked in Anthropic\'s dialect');
});

test('responses on <engram>/v1: a chain by previous_response_id, stored responses per agent, models', async ({ engram, upstream, alice, bob }) => {
  const sdk = openai(engram, alice);
  upstream.enqueue({ type: 'text', text: 'Use tools/deploy.sh.' });
  const first = await sdk.responses.create({ model: 'gpt-test', input: 'Where is the deploy script kept?' });
  assert.is(first.output_text, 'Use tools/deploy.sh.');
  assert.match(lastForwarded(upstream), REFLECTION_BLOCK);

  upstream.enqueue({ type: 'text', text: 'With the staging profile.' });
  const second = await sdk.responses.create({ model: 'gpt-test', previous_response_id: first.id, input: 'Which profile?' });
  assert.is(second.output_text, 'With the staging profile.');
  const received = upstream.conversationRequests().at(-1)!.json;
  assert.is(received.previous_response_id, undefined, 'Engram expands the chain itself');
  assert.match(JSON.stringify(received.input), /Where is the deploy script kept\?[^]*Use tools\/deploy\.sh\.[^]*Which profile\?/);

  assert.is((await sdk.responses.retrieve(second.id)).id, second.id);
  // Bob's token on the same URL does not see alice's response, nor chain from it.
  const stranger = openai(engram, bob);
  const lookedUp = await stranger.responses.retrieve(second.id).then(() => 200, (error: { status?: number }) => error.status);
  assert.is(lookedUp, 404);
  const chained = await stranger.responses
    .create({ model: 'gpt-test', previous_response_id: second.id, input: 'Go on' })
    .then(() => 200, (error: { status?: number; code?: string }) => [error.status, error.code]);
  assert.equal(chained, [400, 'previous_response_not_found']);

  const models = await sdk.models.list();
  assert.ok(models.data.length > 0);
});

/** Opens `url` as a WebSocket; resolves with the socket once open, or rejects with the HTTP status of a refused upgrade. */
function openSocket(url: string, headers: Record<string, string>): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    socket.once('open', () => resolve(socket));
    socket.once('unexpected-response', (_request, response) => reject(Object.assign(new Error(`HTTP ${response.statusCode}`), { status: response.statusCode })));
    socket.once('error', reject);
  });
}

test('a Responses WebSocket turn on <engram>/v1/responses serves the token\'s agent', async ({ engram, upstream, alice, bob }) => {
  const url = `${engram.url.replace(/^http/, 'ws')}/v1/responses`;
  const socket = await openSocket(url, { authorization: `Bearer ${alice.token}` });
  try {
    const frames: any[] = [];
    const completed = new Promise<void>((resolve) =>
      socket.on('message', (data: RawData) => {
        const frame = JSON.parse(String(data));
        frames.push(frame);
        if (frame.type === 'response.completed' || frame.type === 'error') resolve();
      }),
    );
    upstream.enqueue({ type: 'text', text: 'Over the socket.' });
    socket.send(JSON.stringify({ type: 'response.create', model: 'gpt-test', input: 'Where is the deploy script kept?' }));
    await completed;
    const done = frames.at(-1);
    assert.is(done.type, 'response.completed', JSON.stringify(done));
    assert.is(done.response.output[0].content[0].text, 'Over the socket.');
    assert.match(lastForwarded(upstream), REFLECTION_BLOCK);
  } finally {
    socket.close();
  }
  const refused = await openSocket(url, {}).then(() => 101, (error: { status?: number }) => error.status);
  assert.is(refused, 401, 'no token: the upgrade is refused over HTTP');
  // Bob's socket on the same URL works, for bob.
  const his = await openSocket(url, { authorization: `Bearer ${bob.token}` });
  his.close();
});

test('without a usable token, <engram>/v1 answers each protocol\'s 401 exactly as the agent\'s own URL does', async ({ engram, alice }) => {
  const credentials: Array<[string, Record<string, string>]> = [
    ['no token', {}],
    ['an unknown token', { authorization: 'Bearer egm_not_a_real_token_0000000000' }],
    ['an OpenAI key', { authorization: 'Bearer sk-proj-abcdefghijklmnop' }],
    ['an Anthropic key', { 'x-api-key': 'sk-ant-api03-abcdefghijklmnop' }],
  ];
  const routes: Array<[string, Record<string, string>]> = [
    ['/v1/chat/completions', {}],
    ['/v1/responses', {}],
    ['/v1/messages', { 'anthropic-version': '2023-06-01' }],
  ];
  for (const [what, credential] of credentials) {
    for (const [path, extra] of routes) {
      const ask = async (base: string) => {
        const response = await fetch(base + path, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...extra, ...credential },
          body: JSON.stringify({ model: 'gpt-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
        });
        return { status: response.status, body: await response.json() };
      };
      const short = await ask(engram.url);
      const long = await ask(alice.baseUrl);
      assert.is(short.status, 401, `${what} on ${path}`);
      assert.equal(short.body, long.body, `${what} on ${path}: the same answer as the agent's own URL`);
      if (path === '/v1/messages') assert.equal([short.body.type, short.body.error.type], ['error', 'authentication_error']);
      else assert.is(short.body.error.code, 'unauthorized');
    }
  }
  const models = await fetch(`${engram.url}/v1/models`);
  assert.is(models.status, 401);
});

test('without a token, <engram>/v1 answers before the body arrives and closes', async ({ engram }) => {
  const answer = await rawRequest(engram.url, {
    path: '/v1/chat/completions',
    headers: { 'content-type': 'application/json', 'content-length': String(16 * 1024 * 1024) },
    body: '{"model":"gpt-test","messages":[' + ' '.repeat(1000),
    timeoutMs: 3_000,
  });
  assert.is(answer.status, 401);
  assert.ok(answer.answeredAfterMs! < 2_000, `answered at once (${answer.answeredAfterMs} ms)`);
  assert.ok(answer.closedByServer, 'the server closed the connection rather than read the body');
});

test('an unknown path under /v1 names the base URLs that exist, in the OpenAI error shape', async ({ engram, alice }) => {
  const response = await fetch(`${engram.url}/v1/embeddings`, {
    method: 'POST',
    headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' },
    body: '{}',
  });
  assert.is(response.status, 404);
  const body = await response.json();
  assert.is(body.error.code, 'not_found');
  assert.ok(body.error.message.includes(`${engram.url}/v1 `), body.error.message);
  assert.ok(body.error.message.includes(`${engram.url}/v0/orgs/{org}/agents/{agent}/v1`), body.error.message);
  const below = await fetch(`${alice.baseUrl}/v1/embeddings`, { method: 'POST' });
  assert.match((await below.json()).error.message, `${engram.url}/v1 `);
  // Outside /v1 the answer stays the plain one.
  assert.is((await (await fetch(`${engram.url}/nowhere`)).json()).error.message, 'No route for GET /nowhere');
});

async function mcpClient(engram: TestEngram, token: string): Promise<Client> {
  const client = new Client({ name: 'engram-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${engram.url}/v0/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

const textOf = (result: any) => (result.content as Array<{ text: string }>).map((part) => part.text).join('\n');

test('/v0/mcp with an agent token serves that agent\'s tools and memory only', async ({ engram, alice, bob }) => {
  const hers = await mcpClient(engram, alice.token);
  const his = await mcpClient(engram, bob.token);
  try {
    const { tools } = await hers.listTools();
    assert.ok(tools.some((tool) => tool.name === 'recall'));
    assert.match(textOf(await hers.callTool({ name: 'recall', arguments: { query: 'where is the deploy script?' } })), 'tools/deploy.sh');
    assert.not.match(textOf(await his.callTool({ name: 'recall', arguments: { query: 'where is the deploy script?' } })), 'tools/deploy.sh');
    // What bob remembers lands in bob's memory, not alice's.
    await his.callTool({ name: 'remember', arguments: { content: 'The release train leaves on Thursdays.', kind: 'factual' } });
    assert.ok((await engram.reflections(bob)).some((reflection) => reflection.content.includes('Thursdays')));
    assert.not.ok((await engram.reflections(alice)).some((reflection) => reflection.content.includes('Thursdays')));
  } finally {
    await hers.close();
    await his.close();
  }
  const refused = await fetch(`${engram.url}/v0/mcp`, {
    method: 'POST',
    headers: { authorization: 'Bearer egm_not_a_real_token_0000000000', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  assert.is(refused.status, 401, 'an unknown agent token is refused');
  assert.match(refused.headers.get('www-authenticate') ?? '', /resource_metadata=/);
});

test.run();
