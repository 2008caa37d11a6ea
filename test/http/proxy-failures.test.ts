/**
 * What must not happen: failed or aborted exchanges teach nothing, agents never see
 * each other, secrets never land, bad input gets the protocol's own error and the
 * server keeps serving.
 */
import fs from 'node:fs';
import path from 'node:path';
import net from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { eventually, idle, startEngram, type TestAgent, type TestEngram } from '../support/engram.js';

interface Context {
  upstream: ScriptedUpstream;
  engram: TestEngram;
}
const test = suite<Context>('proxy failures');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.engram = await startEngram({ 'settle-ms': '30', 'body-limit': String(64 * 1024), 'upstream-timeout-ms': '400' });
});
test.after(async ({ upstream, engram }) => {
  await engram.close();
  await upstream.close();
});

const chat = (agent: TestAgent, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${agent.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${agent.token}`, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

const messages = (agent: TestAgent, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${agent.baseUrl}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': agent.token, 'anthropic-version': '2023-06-01', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

const teachBody = (stream: boolean, fact = 'The billing service runs on port 7311.') => ({
  model: 'gpt-test',
  stream,
  messages: [{ role: 'user', content: `REMEMBER: ${fact}` }],
});

async function reflections(engram: TestEngram, agent: TestAgent): Promise<any[]> {
  const listed = await engram.api('GET', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/reflections`);
  return listed.json.data;
}

/** Idle once the agent's `count` turns have ended (each is logged when it ends, after any job it publishes) and no extraction job is left. */
async function turnsEnded(engram: TestEngram, agent: TestAgent, count: number): Promise<void> {
  await eventually(async () => {
    const listed = await engram.api('GET', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/requests`);
    return listed.json.data.length >= count ? true : undefined;
  }, 10_000, `${count} request log entries`);
  await idle(engram);
}

test('failed upstream answers and client aborts teach nothing', async ({ upstream, engram }) => {
  const agent = await engram.createAgent(upstream.url);
  const before = upstream.extractionRequests().length;

  upstream.enqueue({ type: 'error', status: 500 });
  assert.is((await chat(agent, teachBody(false))).status, 500);
  upstream.enqueue({ type: 'error', status: 400 });
  assert.is((await chat(agent, teachBody(true))).status, 400);

  upstream.enqueue({ type: 'break', afterEvents: 2 });
  const broken = await chat(agent, teachBody(true));
  assert.is(broken.status, 200);
  const brokenText = await broken.text();
  assert.match(brokenText, /"error"/, 'a mid-stream failure reaches the client as an error event');

  upstream.enqueue({ type: 'error', status: 500, afterEvents: 2 });
  const errored = await chat(agent, teachBody(true));
  assert.is(errored.status, 200);
  assert.match(await errored.text(), /"error"/, 'the upstream error event is relayed');

  await turnsEnded(engram, agent, 4);
  assert.equal(await reflections(engram, agent), []);
  assert.is(upstream.extractionRequests().length, before, 'no extraction call was made');
});

test('an exchange the client aborts mid-stream aborts the upstream and teaches nothing', async ({ upstream, engram }) => {
  const agent = await engram.createAgent(upstream.url);
  upstream.enqueue([{ type: 'text', text: 'one two three four five six seven eight' }, { chunkDelayMs: 300 }]);
  const response = await chat(agent, { ...teachBody(true, 'The cache lives in redis-7.'), stream: true });
  const reader = response.body!.getReader();
  await reader.read();
  await reader.cancel();
  await eventually(async () => (upstream.conversationRequests().at(-1)!.abandoned ? true : undefined), 2000, 'the upstream request to be aborted');
  await turnsEnded(engram, agent, 1);
  assert.equal(await reflections(engram, agent), []);
});

test('isolation: tokens are per agent and memories never cross', async ({ upstream, engram }) => {
  const a = await engram.createAgent(upstream.url);
  const b = await engram.createAgent(upstream.url);
  const crossed = { ...b, token: a.token };
  const denied = await chat(crossed, teachBody(false));
  assert.is(denied.status, 401);
  assert.is((await denied.json()).error.code, 'unauthorized');
  const read = await engram.api('GET', `/v0/orgs/${b.orgId}/agents/${b.agentId}/reflections`, undefined, a.token);
  assert.is(read.status, 401);

  upstream.enqueue({ type: 'text', text: 'ok' });
  await (await chat(a, teachBody(false, 'The secret lab is in building 42.'))).text();
  await eventually(async () => ((await reflections(engram, a)).length > 0 ? true : undefined));
  upstream.enqueue({ type: 'text', text: 'no idea' });
  const asked = await chat(b, { model: 'gpt-test', messages: [{ role: 'user', content: 'Which building is the secret lab in?' }] });
  assert.is(asked.headers.get('x-engram-injected'), '0');
  assert.not.match(JSON.stringify(upstream.conversationRequests().at(-1)!.json), 'building 42');
});

const SECRETS = {
  openai: 'sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z',
  github: 'ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8',
  awsId: 'AKIAIOSFODNN7EXAMPLE',
  awsSecret: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  pem: '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n-----END RSA PRIVATE KEY-----',
  urlPassword: 'hunter2-Pa55word',
};

test('secrets never reach a reflection, the queue, the extraction call or the file', async ({ upstream, engram }) => {
  const agent = await engram.createAgent(upstream.url);
  const lines = [
    `REMEMBER: The OpenAI key for staging is ${SECRETS.openai}`,
    `REMEMBER: CI pushes with the token ${SECRETS.github}`,
    `REMEMBER: AWS access is aws_access_key_id=${SECRETS.awsId} aws_secret_access_key=${SECRETS.awsSecret}`,
    `REMEMBER: The database URL is postgres://admin:${SECRETS.urlPassword}@db.internal:5432/app`,
    `REMEMBER: The deploy key is ${SECRETS.pem.replaceAll('\n', ' ')}`,
  ];
  upstream.enqueue({ type: 'text', text: 'Stored.' });
  const response = await chat(agent, { model: 'gpt-test', messages: [{ role: 'user', content: lines.join('\n') }, ] });
  assert.is(response.status, 200);
  await response.text();
  const stored = await eventually(async () => {
    const found = await reflections(engram, agent);
    return found.length >= 3 ? found : undefined;
  });
  await idle(engram);
  const haystacks = [
    JSON.stringify(stored),
    JSON.stringify(upstream.extractionRequests().map((request) => request.json)),
  ];
  for (const file of fs.readdirSync(engram.dataDir)) {
    if (file.startsWith('engram.db')) haystacks.push(fs.readFileSync(path.join(engram.dataDir, file)).toString('latin1'));
  }
  for (const [name, secret] of Object.entries(SECRETS)) {
    const needle = name === 'pem' ? 'MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun' : secret;
    for (const haystack of haystacks) assert.not.ok(haystack.includes(needle), `${name} leaked`);
  }
  assert.ok(stored.some((r) => r.content.includes('staging')), 'the rest of the fact is kept');
});

test('at rest: neither the upstream key nor any access token is in the file', async ({ upstream, engram }) => {
  const key = 'sk-at-rest-upstream-key-9f8e7d6c5b4a';
  const agent = await engram.createAgent(upstream.url, { upstreamKey: key });
  upstream.enqueue({ type: 'text', text: 'fine' });
  assert.is((await chat(agent, { model: 'gpt-test', messages: [{ role: 'user', content: 'hello' }] })).status, 200);
  const files = fs.readdirSync(engram.dataDir).filter((file) => file.startsWith('engram.db'));
  assert.ok(files.length > 0);
  for (const file of files) {
    const bytes = fs.readFileSync(path.join(engram.dataDir, file)).toString('latin1');
    assert.not.ok(bytes.includes(key), `upstream key in clear in ${file}`);
    assert.not.ok(bytes.includes(agent.token), `access token in clear in ${file}`);
  }
});

test('bad input gets the protocol envelope and the right status', async ({ upstream, engram }) => {
  const agent = await engram.createAgent(upstream.url);
  const cases: Array<[string, Promise<Response>, number, string]> = [
    ['invalid JSON (chat)', chat(agent, '{"model": '), 400, 'invalid_json'],
    ['invalid JSON (messages)', messages(agent, '{nope'), 400, 'invalid_request_error'],
    ['missing model (chat)', chat(agent, { messages: [{ role: 'user', content: 'x' }] }), 400, 'missing_model'],
    ['missing model (messages)', messages(agent, { max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }), 400, 'invalid_request_error'],
    ['wrong token', chat({ ...agent, token: 'egm_wrongwrongwrongwrongwrong' }, teachBody(false)), 401, 'unauthorized'],
    ['no token', fetch(`${agent.baseUrl}/v1/chat/completions`, { method: 'POST', body: '{}' }), 401, 'unauthorized'],
    ['unknown org', chat({ ...agent, baseUrl: `${engram.url}/v0/orgs/nope/agents/${agent.agentId}` }, teachBody(false)), 401, 'unauthorized'],
    ['unknown agent (messages)', messages({ ...agent, baseUrl: `${engram.url}/v0/orgs/${agent.orgId}/agents/nope` }, teachBody(false)), 401, 'authentication_error'],
    ['body over the limit', chat(agent, { model: 'gpt-test', messages: [{ role: 'user', content: 'x'.repeat(70 * 1024) }] }), 413, 'body_too_large'],
    ['body over the limit (messages)', messages(agent, { model: 'm', messages: [{ role: 'user', content: 'x'.repeat(70 * 1024) }] }), 413, 'request_too_large'],
  ];
  for (const [name, pending, status, code] of cases) {
    const response = await pending;
    assert.is(response.status, status, name);
    const body = await response.json();
    if (name.includes('messages')) {
      assert.is(body.type, 'error', name);
      assert.is(body.error.type, code, name);
      assert.type(body.error.message, 'string');
    } else {
      assert.is(body.error.code, code, name);
      assert.type(body.error.message, 'string');
      assert.type(body.error.type, 'string');
    }
    assert.ok(response.headers.get('x-engram-injected') !== null, `${name}: x-engram-injected`);
  }
});

test('an unknown path gets a 404 in the error envelope', async ({ engram }) => {
  const response = await fetch(`${engram.url}/v0/orgs/x/agents/y/v1/nothing-here`, { method: 'POST', body: '{}' });
  assert.is(response.status, 404);
  const body = await response.json();
  assert.is(body.error.code, 'not_found');
  assert.match(body.error.message, '/v1/nothing-here');
});

test('an unreachable or silent upstream gets 502 / 504, and the server keeps serving', async ({ upstream, engram }) => {
  const closed = await new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
  const unreachable = await engram.createAgent(`http://127.0.0.1:${closed}`);
  const down = await messages(unreachable, { model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
  assert.is(down.status, 502);
  assert.is((await down.json()).error.type, 'api_error');

  const agent = await engram.createAgent(upstream.url);
  upstream.enqueue({ type: 'hang' });
  const slow = await chat(agent, { model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] });
  assert.is(slow.status, 504);
  assert.is((await slow.json()).error.code, 'upstream_timeout');

  upstream.enqueue({ type: 'text', text: 'still here' });
  const fine = await chat(agent, { model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] });
  assert.is(fine.status, 200);
  assert.is((await fine.json()).choices[0].message.content, 'still here');
});

test('an agent whose upstream became forbidden is refused at connect time with 502 naming why; the server keeps serving', async ({ upstream, engram }) => {
  // Created while private addresses were allowed, then the operator forbids them.
  const agent = await engram.createAgent(upstream.url.replace('127.0.0.1', 'localhost'));
  const dir = fs.mkdtempSync(path.join(path.dirname(engram.dataDir), 'engram-strict-'));
  fs.cpSync(engram.dataDir, dir, { recursive: true });
  const strict = await startEngram({ 'upstream-allow-private': 'false', 'settle-ms': '30' }, dir);
  try {
    const moved = { ...agent, baseUrl: agent.baseUrl.replace(engram.url, strict.url) };
    const before = upstream.conversationRequests().length;
    for (const reply of [await chat(moved, { model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] }), await messages(moved, { model: 'claude-test', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] })]) {
      assert.is(reply.status, 502);
      const body = await reply.json();
      assert.match(body.error.message, /localhost is a loopback address and ENGRAM_UPSTREAM_ALLOW_PRIVATE is off/);
    }
    assert.is(upstream.conversationRequests().length, before, 'nothing reached the upstream');
    assert.is((await strict.api('GET', '/v0/orgs')).status, 200);
  } finally {
    await strict.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
