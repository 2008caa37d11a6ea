/**
 * Issue 15: a caller without a token costs Engram a token lookup, never a body. The
 * proxy, stored-response and MCP endpoints answer 401 from the headers alone, in their
 * own envelope, and close the connection instead of reading the body that was on its
 * way. The conversation machine uses the lookup made from the headers.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { startEngram, type TestAgent, type TestEngram } from '../support/engram.js';
import { rawRequest } from '../support/raw-http.js';

interface Context {
  upstream: ScriptedUpstream;
  engram: TestEngram;
  agent: TestAgent;
  prefix: string;
}
const test = suite<Context>('authentication before the body');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.engram = await startEngram();
  context.agent = await context.engram.createAgent(context.upstream.url);
  context.prefix = new URL(context.agent.baseUrl).pathname;
});
test.after(async ({ upstream, engram }) => {
  await engram.close();
  await upstream.close();
});

/** Declares 16 MB (under the body limit) and sends only the first kilobyte of it. */
const declaredNotSent = (headers: Record<string, string> = {}) => ({
  headers: { 'content-type': 'application/json', 'content-length': String(16 * 1024 * 1024), ...headers },
  body: '{"model":"gpt-test","messages":[' + ' '.repeat(1000),
  timeoutMs: 3_000,
});

test('without a token, each proxy endpoint answers 401 in its protocol envelope before the body arrives, and closes', async ({ engram, prefix }) => {
  const cases: Array<{ path: string; headers: Record<string, string>; shape: 'openai' | 'anthropic' }> = [
    { path: '/v1/chat/completions', headers: {}, shape: 'openai' },
    { path: '/v1/responses', headers: { authorization: 'Bearer egm_not_a_real_token_000000' }, shape: 'openai' },
    { path: '/v1/messages', headers: { 'x-api-key': 'sk-ant-someone-elses-key', 'anthropic-version': '2023-06-01' }, shape: 'anthropic' },
    { path: '/v1/messages/count_tokens', headers: { 'anthropic-version': '2023-06-01' }, shape: 'anthropic' },
  ];
  for (const { path, headers, shape } of cases) {
    const answer = await rawRequest(engram.url, { path: prefix + path, ...declaredNotSent(headers) });
    assert.is(answer.status, 401, `${path}: 401 without the body (got ${answer.status})`);
    assert.ok(answer.answeredAfterMs! < 2_000, `${path}: answered at once (${answer.answeredAfterMs} ms)`);
    assert.is(answer.headers.connection, 'close', `${path}: the connection is closed after the answer`);
    assert.ok(answer.closedByServer, `${path}: the server closed the connection rather than read the body`);
    const body = JSON.parse(answer.body);
    if (shape === 'openai') assert.is(body.error.code, 'unauthorized', path);
    else assert.equal([body.type, body.error.type], ['error', 'authentication_error'], path);
  }
});

test('another agent\'s token, or an org that does not exist, gets the same 401 before the body', async ({ engram, upstream, agent }) => {
  const other = await engram.createAgent(upstream.url);
  for (const path of [
    `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/v1/chat/completions`,
    `/v0/orgs/no-such-org/agents/${other.agentId}/v1/chat/completions`,
  ]) {
    const answer = await rawRequest(engram.url, { path, ...declaredNotSent({ authorization: `Bearer ${other.token}` }) });
    assert.is(answer.status, 401, path);
    assert.ok(answer.closedByServer, path);
    assert.is(JSON.parse(answer.body).error.code, 'unauthorized');
  }
});

test('the MCP endpoint answers its JSON-RPC 401 before reading the body', async ({ engram, prefix }) => {
  const answer = await rawRequest(engram.url, {
    path: `${prefix}/v0/mcp`,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': String(3 * 1024 * 1024) },
    body: '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{' + ' '.repeat(1000),
    timeoutMs: 3_000,
  });
  assert.is(answer.status, 401);
  assert.is(answer.headers['www-authenticate'], 'Bearer realm="engram"');
  assert.is(answer.headers.connection, 'close');
  assert.ok(answer.closedByServer);
  assert.is(JSON.parse(answer.body).error.code, -32001);
});

test('Expect: 100-continue: refused without the invitation to send; with the token, invited once the checks pass', async ({ engram, agent, prefix }) => {
  const body = JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'hello' }] });
  const refused = await rawRequest(engram.url, {
    path: `${prefix}/v1/chat/completions`,
    headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
    expectContinue: true,
    body,
    timeoutMs: 3_000,
  });
  assert.is(refused.status, 401);
  assert.is(refused.continued, false, 'no 100 Continue before the 401');
  assert.is(refused.bodyBytesWritten, 0, 'the body was never sent');

  const invited = await rawRequest(engram.url, {
    path: `${prefix}/v1/chat/completions`,
    headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
    expectContinue: true,
    body,
    timeoutMs: 3_000,
  });
  assert.is(invited.continued, true);
  assert.is(invited.status, 200);
  assert.match(JSON.parse(invited.body).choices[0].message.content, 'echo: hello');
});

test('a whole 30 MB body sent without a token: the client reads the 401', async ({ engram, agent }) => {
  const response = await fetch(`${agent.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: Buffer.alloc(30 * 1024 * 1024, 'a'),
  }).catch((error: unknown) => error as Error);
  assert.ok(!(response instanceof Error), `the client got an answer, not ${String(response)}`);
  assert.is((response as Response).status, 401);
  assert.is((await (response as Response).json()).error.code, 'unauthorized');
});

test('stored responses and the models list check the token from the headers', async ({ engram, agent }) => {
  for (const [method, path] of [['GET', '/v1/responses/resp_x'], ['DELETE', '/v1/responses/resp_x'], ['GET', '/v1/responses/resp_x/input_items'], ['GET', '/v1/models']]) {
    const response = await fetch(`${agent.baseUrl}${path}`, { method });
    assert.is(response.status, 401, `${method} ${path}`);
    const authorised = await fetch(`${agent.baseUrl}${path}`, { method, headers: { authorization: `Bearer ${agent.token}` } });
    assert.is(authorised.status, path === '/v1/models' ? 200 : 404, `${method} ${path} with the token`);
  }
  assert.is((await fetch(`${engram.url}${new URL(agent.baseUrl).pathname}/`, { method: 'HEAD' })).status, 200, 'the warm-up HEAD needs no token');
});

test('an authenticated exchange looks its token up once, from the headers', async ({ engram, agent }) => {
  const directory = engram.running.deps.control.directory;
  const findToken = directory.findToken.bind(directory);
  let lookups = 0;
  directory.findToken = (hash) => {
    lookups++;
    return findToken(hash);
  };
  try {
    const response = await fetch(`${agent.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${agent.token}` },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'hello' }] }),
    });
    assert.is(response.status, 200);
    await response.text();
    assert.is(lookups, 1);
  } finally {
    directory.findToken = findToken;
  }
});

test.run();
