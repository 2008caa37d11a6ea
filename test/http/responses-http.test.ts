/**
 * Endpoint 3 over HTTP: the openai SDK's `responses.create` gets through Engram what it
 * gets from the upstream directly; chains by `previous_response_id` work against a
 * stateless upstream (Engram expands them) and a stateful one (Engram forwards the id);
 * recorded responses are read back and deleted per agent, and kept sealed on disk.
 */
import fs from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import { startScriptedUpstream, type Reply, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { eventually, startEngram, type TestAgent, type TestEngram } from '../support/engram.js';
import { wire } from '../support/openai-wire.js';

const UPSTREAM_KEY = 'sk-upstream-secret-key-0000000000000000';

interface Context {
  upstream: ScriptedUpstream;
  stateful: ScriptedUpstream;
  engram: TestEngram;
  agent: TestAgent;
}
const test = suite<Context>('responses over HTTP');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.stateful = await startScriptedUpstream({ statefulResponses: true });
  context.engram = await startEngram();
  context.agent = await context.engram.createAgent(context.upstream.url, { upstreamKey: UPSTREAM_KEY });
});
test.after(async ({ upstream, stateful, engram }) => {
  await engram.close();
  await upstream.close();
  await stateful.close();
});

const client = (agent: TestAgent) => new OpenAI({ baseURL: `${agent.baseUrl}/v1`, apiKey: agent.token, maxRetries: 0 });
const direct = (upstream: ScriptedUpstream) => new OpenAI({ baseURL: `${upstream.url}/v1`, apiKey: UPSTREAM_KEY, maxRetries: 0 });

const weather = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
};

async function call(agent: TestAgent, method: string, pathname: string, token = agent.token): Promise<{ status: number; json: any }> {
  const response = await fetch(`${agent.baseUrl}${pathname}`, { method, headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, json: await response.json() };
}

for (const stream of [false, true]) {
  test(`openai responses.create (${stream ? 'streaming' : 'JSON'}) with a function call: the same as direct`, async (context) => {
    const reply: Reply = { type: 'tool_call', name: 'get_weather', arguments: { city: 'Paris' }, text: 'Let me look.' };
    const run = async (sdk: OpenAI) => {
      if (!stream) return wire(await sdk.responses.create({ model: 'gpt-test', input: 'Weather in Paris?', tools: [weather] }));
      const events: any[] = [];
      const streamed = await sdk.responses.create({ model: 'gpt-test', input: 'Weather in Paris?', tools: [weather], stream: true });
      for await (const event of streamed) events.push(event);
      return events;
    };
    context.upstream.enqueue(reply);
    const viaUpstream = await run(direct(context.upstream));
    const directRequest = context.upstream.conversationRequests().at(-1)!;
    context.upstream.enqueue(reply);
    const viaEngram = await run(client(context.agent));
    const proxiedRequest = context.upstream.conversationRequests().at(-1)!;
    assert.equal(viaEngram, viaUpstream);
    assert.equal(proxiedRequest.json, directRequest.json, 'the upstream receives what the client sent');
    assert.ok(String(proxiedRequest.headers.authorization).includes(UPSTREAM_KEY));
    if (stream) {
      const sequence = (viaEngram as any[]).map((event) => event.sequence_number);
      assert.equal(sequence, [...sequence].sort((a, b) => a - b));
      assert.is((viaEngram as any[]).at(-1).type, 'response.completed');
    }
  });
}

test('a three-turn chain against a stateless upstream: Engram expands it; GET, input_items, DELETE', async (context) => {
  const { upstream, agent } = context;
  const sdk = client(agent);
  upstream.enqueue({ type: 'tool_call', name: 'get_weather', arguments: { city: 'Oslo' } });
  const first = await sdk.responses.create({ model: 'gpt-test', instructions: 'Be brief.', input: 'Weather in Oslo?', tools: [weather] });
  const functionCall = first.output.find((item) => item.type === 'function_call') as any;
  assert.ok(functionCall, 'turn 1 answers a function call');

  upstream.enqueue({ type: 'text', text: 'It is 4 degrees in Oslo.' });
  const second = await sdk.responses.create({
    model: 'gpt-test',
    instructions: 'Be brief.',
    previous_response_id: first.id,
    input: [{ type: 'function_call_output', call_id: functionCall.call_id, output: '{"celsius":4}' }],
    tools: [weather],
  });
  upstream.enqueue({ type: 'text', text: 'Take a coat.' });
  const third = await sdk.responses.create({ model: 'gpt-test', previous_response_id: second.id, input: 'Do I need a coat?' });
  assert.is(third.output_text, 'Take a coat.');

  const received = upstream.conversationRequests().at(-1)!.json;
  assert.is(received.previous_response_id, undefined, 'the stateless upstream never sees the id');
  assert.is(received.instructions, undefined, 'instructions are not carried over from earlier responses');
  const types = received.input.map((item: any) => item.type ?? item.role);
  assert.equal(types, ['user', 'function_call', 'function_call_output', 'message', 'user']);
  assert.is(received.input[0].content, 'Weather in Oslo?');
  assert.is(received.input[1].call_id, functionCall.call_id);
  assert.is(received.input[3].content[0].text, 'It is 4 degrees in Oslo.');
  assert.is(received.input[4].content, 'Do I need a coat?');

  const got = await call(agent, 'GET', `/v1/responses/${second.id}`);
  assert.is(got.status, 200);
  assert.is(got.json.id, second.id);
  assert.is(got.json.previous_response_id, first.id);
  assert.is(got.json.output[0].content[0].text, 'It is 4 degrees in Oslo.');
  const retrieved = await sdk.responses.retrieve(third.id);
  assert.is(retrieved.id, third.id);

  const items = await call(agent, 'GET', `/v1/responses/${third.id}/input_items?order=asc&limit=2`);
  assert.is(items.status, 200);
  assert.is(items.json.object, 'list');
  assert.is(items.json.data.length, 2);
  assert.is(items.json.has_more, true);
  assert.is(items.json.data[0].type, 'message');
  assert.equal(items.json.data[0].content, [{ type: 'input_text', text: 'Weather in Oslo?' }]);
  const rest = await call(agent, 'GET', `/v1/responses/${third.id}/input_items?order=asc&after=${items.json.last_id}`);
  assert.equal(rest.json.data.map((item: any) => item.type), ['function_call_output', 'message', 'message']);
  assert.is(rest.json.has_more, false);
  const newest = await sdk.responses.inputItems.list(third.id);
  assert.is((newest.data[0] as any).content[0].text, 'Do I need a coat?', 'the default order is newest first');

  const deleted = await call(agent, 'DELETE', `/v1/responses/${third.id}`);
  assert.equal(deleted.json, { id: third.id, object: 'response', deleted: true });
  assert.is((await call(agent, 'GET', `/v1/responses/${third.id}`)).status, 404);
  assert.is((await call(agent, 'DELETE', `/v1/responses/${third.id}`)).status, 404);
  const again = await fetch(`${agent.baseUrl}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-test', previous_response_id: third.id, input: 'And tomorrow?' }),
  });
  assert.is(again.status, 400);
  const body = await again.json();
  assert.equal(
    { type: body.error.type, code: body.error.code, param: body.error.param },
    { type: 'invalid_request_error', code: 'previous_response_not_found', param: 'previous_response_id' },
  );
});

test('another agent cannot read, delete or continue a response; store:false is not kept', async (context) => {
  const { upstream, engram, agent } = context;
  upstream.enqueue({ type: 'text', text: 'Hello.' });
  const mine = await client(agent).responses.create({ model: 'gpt-test', input: 'Hi' });
  const other = await engram.createAgent(upstream.url);
  assert.is((await call(other, 'GET', `/v1/responses/${mine.id}`)).status, 404);
  assert.is((await call(other, 'DELETE', `/v1/responses/${mine.id}`)).status, 404);
  assert.is((await call(agent, 'GET', `/v1/responses/${mine.id}`)).status, 200, 'still there for its owner');
  assert.is((await call(agent, 'GET', `/v1/responses/${mine.id}`, other.token)).status, 401, "another agent's token on this agent's URL");
  const continued = await client(other)
    .responses.create({ model: 'gpt-test', previous_response_id: mine.id, input: 'Go on' })
    .then(() => undefined, (error: any) => error);
  assert.is(continued?.status, 400);
  assert.is(continued?.code, 'previous_response_not_found');

  upstream.enqueue({ type: 'text', text: 'Not kept.' });
  const ephemeral = await client(agent).responses.create({ model: 'gpt-test', input: 'Hi', store: false });
  assert.is((await call(agent, 'GET', `/v1/responses/${ephemeral.id}`)).status, 404);
  const bad = await call(agent, 'GET', `/v1/responses/${mine.id}/input_items?limit=1000`);
  assert.is(bad.status, 400);
  assert.is(bad.json.error.param, 'limit');
});

test("responses_state 'upstream': the id is forwarded with only the new input; the block stays in the new part", async (context) => {
  const { stateful, engram } = context;
  const agent = await engram.createAgent(stateful.url);
  const patched = await engram.api('PATCH', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}`, { upstream: { responses_state: 'upstream' } });
  assert.is(patched.json.upstream.responses_state, 'upstream');
  stateful.enqueue({ type: 'text', text: 'Noted.' });
  const first = await client(agent).responses.create({ model: 'gpt-test', input: 'REMEMBER: the build cache lives in /var/cache/build.' });
  await engram.waitForReflections(agent);
  stateful.enqueue({ type: 'text', text: 'In /var/cache/build.' });
  const second = await client(agent).responses.create({ model: 'gpt-test', previous_response_id: first.id, input: 'Where does the build cache live?' });
  assert.is(second.output_text, 'In /var/cache/build.');
  const received = stateful.conversationRequests().at(-1)!.json;
  assert.is(received.previous_response_id, first.id, 'the upstream keeps the chain');
  const text = JSON.stringify(received.input);
  assert.not.match(text, 'REMEMBER', 'the earlier turn is not resent');
  assert.match(text, /Where does the build cache live\?[^]*<engram-reflections>[^]*\/var\/cache\/build/);

  // Engram still knows the whole chain, for reading back.
  const items = await call(agent, 'GET', `/v1/responses/${second.id}/input_items?order=asc`);
  assert.is(items.json.data.length, 3);
});

test('extraction from a Responses exchange: calls and their outputs, never reasoning', async (context) => {
  const { upstream, engram } = context;
  const agent = await engram.createAgent(upstream.url);
  upstream.enqueue({ type: 'tool_call', name: 'get_weather', arguments: { city: 'Rome' } });
  const first = await client(agent).responses.create({
    model: 'gpt-test',
    input: 'REMEMBER: the weather service is called with get_weather. Weather in Rome?',
    tools: [weather],
    include: ['reasoning.encrypted_content'],
    store: false,
  });
  const functionCall = first.output.find((item) => item.type === 'function_call') as any;
  upstream.enqueue({ type: 'text', text: 'Sunny in Rome.', thinking: 'The tool said sunny; I should answer plainly.' });
  const final = await client(agent).responses.create({
    model: 'gpt-test',
    input: [
      { role: 'user', content: 'REMEMBER: the weather service is called with get_weather. Weather in Rome?' },
      ...first.output,
      { type: 'function_call_output', call_id: functionCall.call_id, output: 'sunny, 24C' },
    ] as any,
    tools: [weather],
    include: ['reasoning.encrypted_content'],
    store: false,
  });
  const reasoning = final.output.find((item) => item.type === 'reasoning') as any;
  assert.ok(reasoning?.encrypted_content, 'the upstream answered with encrypted reasoning');
  await eventually(async () => (upstream.extractionRequests().some((r) => JSON.stringify(r.json).includes('Sunny in Rome')) ? true : undefined));
  const extraction = JSON.stringify(upstream.extractionRequests().find((r) => JSON.stringify(r.json).includes('Sunny in Rome'))!.json);
  assert.match(extraction, 'get_weather');
  assert.match(extraction, 'sunny, 24C');
  assert.not.match(extraction, reasoning.encrypted_content);
  assert.not.match(extraction, 'I should answer plainly');
  const stored = await engram.api('GET', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/reflections`);
  assert.not.match(JSON.stringify(stored.json), 'I should answer plainly');
});

test('recorded responses are sealed in the SQLite file', async (context) => {
  const { upstream, engram, agent } = context;
  // Shaped like a key, so the extraction queue holds it redacted; the record must hold it sealed.
  const secret = 'sk-proj-Q7vX2mN9pL4kR8tY1wZ5cB3nH6jF0dS2aG7eK9uM';
  upstream.enqueue({ type: 'text', text: `Stored: ${secret}` });
  const response = await client(agent).responses.create({ model: 'gpt-test', input: `Keep this: ${secret}` });
  assert.is((await call(agent, 'GET', `/v1/responses/${response.id}`)).json.output[0].content[0].text, `Stored: ${secret}`);
  const files = fs.readdirSync(engram.dataDir).filter((name) => name.includes('.db') || name.includes('sqlite'));
  assert.ok(files.length > 0, `a database file in ${engram.dataDir}`);
  for (const name of files) {
    const bytes = fs.readFileSync(path.join(engram.dataDir, name));
    assert.not.ok(bytes.includes(secret), `${name} holds the conversation in clear`);
  }
});

test('bad requests get the Responses error envelope', async (context) => {
  const { agent } = context;
  const post = async (body: string) => {
    const response = await fetch(`${agent.baseUrl}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
      body,
    });
    return { status: response.status, json: await response.json() };
  };
  const cases: Array<[string, string]> = [
    ['{"model":"gpt-test","input":', 'invalid_json'],
    ['{"input":"hi"}', 'missing_model'],
    ['{"model":"gpt-test","input":42}', 'invalid_request'],
    ['{"model":"gpt-test","input":[{"role":"robot","content":"x"}]}', 'invalid_request'],
    ['{"model":"gpt-test","input":"hi","previous_response_id":7}', 'invalid_request'],
  ];
  for (const [body, code] of cases) {
    const answer = await post(body);
    assert.is(answer.status, 400, body);
    assert.is(answer.json.error.code, code, body);
    assert.is(answer.json.error.type, 'invalid_request_error');
  }
  const unauthorised = await fetch(`${agent.baseUrl}/v1/responses`, { method: 'POST', body: '{}' });
  assert.is(unauthorised.status, 401);
});

test.run();
