import OpenAI from 'openai';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startScriptedUpstream, type ScriptedUpstream } from './scripted-upstream/index.js';
import { responses } from './scripted-upstream/responses.js';
import { wire } from './openai-wire.js';

// The Responses half of the scripted upstream's tests (scripted-upstream.test.ts holds the rest).

let upstream: ScriptedUpstream;
let openai: OpenAI;

test.before(async () => {
  upstream = await startScriptedUpstream();
  openai = new OpenAI({ baseURL: `${upstream.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
});
test.after(() => upstream.close());
test.before.each(() => upstream.reset());

const weatherTool = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } } },
  strict: false,
};
const extractionTool = { type: 'function' as const, name: 'record_reflections', parameters: { type: 'object' }, strict: true };

async function rawPost(path: string, body: unknown): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(`${upstream.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** The `{event, data}` pairs of an SSE body. */
function sseEvents(text: string): Array<{ event: string; data: any }> {
  return text.split('\n\n').filter((block) => block.length > 0).map((block) => {
    const [eventLine, dataLine] = block.split('\n');
    assert.ok(eventLine.startsWith('event: ') && dataLine.startsWith('data: '), `malformed event: ${block}`);
    return { event: eventLine.slice('event: '.length), data: JSON.parse(dataLine.slice('data: '.length)) };
  });
}

test('non-streaming text: a full response object echoing the request, with usage', async () => {
  const response = await openai.responses.create({ model: 'gpt-5', instructions: 'be brief', input: 'hello there' });
  assert.match(response.id, /^resp_[0-9a-f]{24}$/);
  assert.is(response.object, 'response');
  assert.is(response.status, 'completed');
  assert.is(response.created_at, 1700000000);
  assert.is(response.model, 'gpt-5');
  assert.is(response.instructions, 'be brief');
  assert.is(response.error, null);
  assert.is(response.previous_response_id, null);
  assert.is(response.output_text, 'echo: hello there');
  const [message] = response.output;
  if (message.type !== 'message') throw new Error(`expected a message, got ${message.type}`);
  assert.match(message.id, /^msg_[0-9a-f]{24}$/);
  assert.is(message.role, 'assistant');
  assert.is(message.status, 'completed');
  assert.equal(message.content, [{ type: 'output_text', annotations: [], logprobs: [], text: 'echo: hello there' }]);
  const usage = response.usage!;
  assert.ok(usage.input_tokens > 0 && usage.output_tokens > 0);
  assert.is(usage.total_tokens, usage.input_tokens + usage.output_tokens);
  assert.equal(usage.input_tokens_details, { cached_tokens: 0 });

  const [req] = upstream.conversationRequests();
  assert.is(req.path, '/v1/responses');
  assert.is(req.protocol, 'responses');
  assert.is(req.extraction, false);
});

test('non-streaming function call: text then a function_call item; user texts skip tool output', async () => {
  upstream.enqueue({ type: 'tool_call', name: 'get_weather', arguments: { city: 'Paris' }, text: 'Let me check.' });
  const input: OpenAI.Responses.ResponseInput = [
    { role: 'developer', content: 'use tools' },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'weather in' }, { type: 'input_text', text: 'Paris?' }] },
    { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Lyon"}' },
    { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
  ];
  const response = await openai.responses.create({ model: 'gpt-5', input, tools: [weatherTool] });
  const [message, call] = response.output;
  assert.is(message.type, 'message');
  assert.is(response.output_text, 'Let me check.');
  if (call.type !== 'function_call') throw new Error(`expected a function_call, got ${call.type}`);
  assert.match(call.id!, /^fc_[0-9a-f]{24}$/);
  assert.match(call.call_id, /^call_[0-9a-f]{24}$/);
  assert.is(call.status, 'completed');
  assert.is(call.name, 'get_weather');
  assert.equal(JSON.parse(call.arguments), { city: 'Paris' });
  assert.equal(response.tools, [weatherTool]);

  const echoed = await openai.responses.create({ model: 'gpt-5', input });
  assert.is(echoed.output_text, 'echo: weather in\nParis?');
  assert.equal(responses.userTexts({ input }), ['weather in\nParis?']);
});

test('streaming: the real event sequence, numbered from 0, ending in response.completed', async () => {
  const text = 'The quick brown fox jumps over the lazy dog.';
  upstream.enqueue({ type: 'text', text }, { type: 'text', text });
  const params = { model: 'gpt-5', input: 'go' };
  const stream = await openai.responses.create({ ...params, stream: true });
  const seen: OpenAI.Responses.ResponseStreamEvent[] = [];
  for await (const event of stream) seen.push(event);

  assert.equal(seen.map((e) => e.sequence_number), seen.map((_, i) => i));
  const types = seen.map((e) => e.type);
  const deltas = seen.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : []));
  assert.ok(deltas.length >= 3, `expected several deltas, got ${deltas.length}`);
  assert.is(deltas.join(''), text);
  assert.equal(types, [
    'response.created',
    'response.in_progress',
    'response.output_item.added',
    'response.content_part.added',
    ...deltas.map(() => 'response.output_text.delta'),
    'response.output_text.done',
    'response.content_part.done',
    'response.output_item.done',
    'response.completed',
  ]);
  const created = seen[0];
  if (created.type !== 'response.created') throw new Error('expected response.created first');
  assert.is(created.response.status, 'in_progress');
  assert.equal(created.response.output, []);
  const delta = seen.find((e) => e.type === 'response.output_text.delta')!;
  if (delta.type !== 'response.output_text.delta') throw new Error('unreachable');
  assert.equal([delta.output_index, delta.content_index, delta.logprobs], [0, 0, []]);

  const completed = seen[seen.length - 1];
  if (completed.type !== 'response.completed') throw new Error('expected response.completed last');
  const plain = await openai.responses.create(params);
  assert.equal(wire(completed.response), wire(plain));
});

test('stream helper: finalResponse assembles reasoning, text and a namespaced call', async () => {
  const reply = { type: 'text' as const, text: 'Forty-two, as always.', thinking: 'The user wants the answer to everything.' };
  const call = { type: 'tool_call' as const, name: 'recall', namespace: 'mcp__engram', arguments: { query: 'answers' }, id: 'call_fixed' };
  upstream.enqueue(reply, reply, call, call);
  const params = { model: 'gpt-5', input: 'the answer?', reasoning: { effort: 'low' as const, summary: 'auto' as const } };
  const stream = openai.responses.stream(params);
  const deltas: string[] = [];
  stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
  const final = await stream.finalResponse();
  const plain = await openai.responses.create(params);
  assert.ok(deltas.length >= 2);
  for (const response of [final, plain]) {
    const [reasoning, message] = response.output;
    if (reasoning.type !== 'reasoning') throw new Error(`expected reasoning, got ${reasoning.type}`);
    assert.match(reasoning.id, /^rs_[0-9a-f]{24}$/);
    assert.equal(reasoning.summary, [{ type: 'summary_text', text: reply.thinking }]);
    assert.is(reasoning.encrypted_content, undefined);
    assert.is(message.type, 'message');
    assert.is(response.output_text, reply.text);
    assert.ok(response.usage!.output_tokens_details.reasoning_tokens > 0);
  }
  assert.equal(wire(final), wire(plain));

  const namespaced = { model: 'gpt-5', input: 'recall', tools: [{ type: 'namespace' as const, name: 'mcp__engram', description: 'Engram', tools: [{ type: 'function' as const, name: 'recall' }] }] };
  const called = await openai.responses.stream(namespaced).finalResponse();
  assert.equal(wire(called), wire(await openai.responses.create(namespaced)));
  const [item] = called.output;
  if (item.type !== 'function_call') throw new Error(`expected a function_call, got ${item.type}`);
  assert.equal([item.call_id, item.name, item.namespace], ['call_fixed', 'recall', 'mcp__engram']);
  assert.equal(responses.toolNames(namespaced), ['recall']);
  assert.equal(responses.toolNames({ tools: [weatherTool, ...namespaced.tools] }), ['get_weather', 'recall']);
});

test('reasoning.encrypted_content only when the request includes it', async () => {
  const reply = { type: 'text' as const, text: 'Done.', thinking: 'Private chain of thought.' };
  upstream.enqueue(reply, reply, reply);
  const body = { model: 'gpt-5', input: 'think', stream: true };
  const without = await rawPost('/v1/responses', body);
  assert.not.match(without.text, /encrypted_content|gAAAAA/);
  const withIt = await rawPost('/v1/responses', { ...body, include: ['reasoning.encrypted_content'], store: false });
  const done = sseEvents(withIt.text).find((e) => e.event === 'response.output_item.done')!;
  assert.match(done.data.item.encrypted_content, /^gAAAAA[A-Za-z0-9_-]{40,}$/);
  const plain = await openai.responses.create({ ...body, stream: false, include: ['reasoning.encrypted_content'] });
  const [reasoning] = plain.output;
  if (reasoning.type !== 'reasoning') throw new Error('expected reasoning');
  assert.is(reasoning.encrypted_content, done.data.item.encrypted_content);
});

test('raw stream bytes: event lines, no [DONE], byte-identical for identical requests', async () => {
  const call = { type: 'tool_call' as const, name: 'get_weather', arguments: { city: 'Rome', days: 3 } };
  upstream.enqueue(call, call);
  const body = { model: 'gpt-5', input: [{ role: 'user', content: 'weather?' }], tools: [weatherTool], stream: true };
  const a = await rawPost('/v1/responses', body);
  const b = await rawPost('/v1/responses', body);
  assert.is(a.status, 200);
  assert.is(a.headers.get('content-type'), 'text/event-stream; charset=utf-8');
  assert.ok(a.headers.get('x-request-id'));
  assert.is(a.text, b.text);
  assert.not.match(a.text, /\[DONE\]/);
  const events = sseEvents(a.text);
  for (const [i, e] of events.entries()) assert.equal([e.data.type, e.data.sequence_number], [e.event, i]);
  const argDeltas = events.filter((e) => e.event === 'response.function_call_arguments.delta');
  assert.ok(argDeltas.length >= 2);
  assert.equal(JSON.parse(argDeltas.map((e) => e.data.delta).join('')), call.arguments);
  const added = events.find((e) => e.event === 'response.output_item.added')!.data.item;
  assert.equal([added.status, added.arguments], ['in_progress', '']);
  const done = events.find((e) => e.event === 'response.function_call_arguments.done')!.data;
  assert.equal([done.item_id, done.output_index, done.arguments], [added.id, 0, JSON.stringify(call.arguments)]);
});

test('errors: an HTTP status in the OpenAI envelope, and the in-stream error event', async () => {
  upstream.enqueue({ type: 'error', status: 429, headers: { 'retry-after': '7' } }, { type: 'error', status: 500, afterEvents: 4 });
  try {
    await openai.responses.create({ model: 'gpt-5', input: 'x' });
    assert.unreachable('expected an error');
  } catch (error) {
    assert.instance(error, OpenAI.APIError);
    const e = error as InstanceType<typeof OpenAI.APIError>;
    assert.equal([e.status, e.code, e.type], [429, 'rate_limit_exceeded', 'requests']);
    assert.is(e.headers?.get('retry-after'), '7');
  }
  const stream = await openai.responses.create({ model: 'gpt-5', input: 'x', stream: true });
  const seen: string[] = [];
  try {
    for await (const event of stream) seen.push(event.type);
    assert.unreachable('expected an error');
  } catch (error) {
    assert.instance(error, OpenAI.APIError);
    assert.is((error as InstanceType<typeof OpenAI.APIError>).code, 'server_error');
  }
  assert.equal(seen, ['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);

  upstream.enqueue({ type: 'error', status: 529, afterEvents: 2 }, { type: 'error', status: 500, afterEvents: 3 });
  const raw = sseEvents((await rawPost('/v1/responses', { model: 'gpt-5', input: 'x', stream: true })).text);
  assert.equal(raw[2], { event: 'error', data: { type: 'error', code: 'server_error', message: 'Scripted upstream error (status 529).', param: null, sequence_number: 2 } });
  try {
    await openai.responses.stream({ model: 'gpt-5', input: 'x' }).finalResponse();
    assert.unreachable('expected an error');
  } catch (error) {
    assert.instance(error, OpenAI.APIError);
  }
});

test('break: the SDK stream throws after the events sent', async () => {
  upstream.enqueue({ type: 'break', afterEvents: 3 });
  const stream = await openai.responses.create({ model: 'gpt-5', input: 'x', stream: true });
  let events = 0;
  try {
    for await (const _ of stream) events++;
    assert.unreachable('expected the stream to throw');
  } catch (error) {
    assert.match((error as Error).message, /terminated/);
  }
  assert.is(events, 3);
});

test('stateless: any previous_response_id is a 400, and the queue is left alone', async () => {
  upstream.enqueue({ type: 'text', text: 'still queued' });
  const res = await rawPost('/v1/responses', { model: 'gpt-5', input: 'more', previous_response_id: 'resp_abc' });
  assert.is(res.status, 400);
  assert.equal(JSON.parse(res.text), {
    error: { message: "Previous response with id 'resp_abc' not found.", type: 'invalid_request_error', param: 'previous_response_id', code: 'previous_response_not_found' },
  });
  const first = await openai.responses.create({ model: 'gpt-5', input: 'hi' });
  assert.is(first.output_text, 'still queued');
  try {
    await openai.responses.create({ model: 'gpt-5', input: 'again', previous_response_id: first.id });
    assert.unreachable('expected a 400');
  } catch (error) {
    assert.instance(error, OpenAI.BadRequestError);
    assert.is((error as InstanceType<typeof OpenAI.APIError>).param, 'previous_response_id');
  }
  assert.is(upstream.conversationRequests().length, 3);
});

test('statefulResponses: known ids continue, unknown and unstored ids are 400s, reset forgets', async () => {
  const own = await startScriptedUpstream({ statefulResponses: true });
  const client = new OpenAI({ baseURL: `${own.url}/v1`, apiKey: 'k', maxRetries: 0 });
  try {
    const first = await client.responses.create({ model: 'gpt-5', input: 'one' });
    const second = await client.responses.stream({ model: 'gpt-5', input: 'two', previous_response_id: first.id }).finalResponse();
    assert.is(second.previous_response_id, first.id);
    assert.is(second.output_text, 'echo: two');
    const third = await client.responses.create({ model: 'gpt-5', input: 'two', previous_response_id: second.id });
    assert.is.not(third.id, second.id);

    const unstored = await client.responses.create({ model: 'gpt-5', input: 'secret', store: false });
    assert.is((wire(unstored) as { store: boolean }).store, false);
    for (const id of ['resp_unknown', unstored.id]) {
      const res = await fetch(`${own.url}/v1/responses`, { method: 'POST', body: JSON.stringify({ model: 'gpt-5', input: 'x', previous_response_id: id }) });
      assert.is(res.status, 400);
      assert.is((await res.json()).error.code, 'previous_response_not_found');
    }
    own.reset();
    const forgotten = await fetch(`${own.url}/v1/responses`, { method: 'POST', body: JSON.stringify({ model: 'gpt-5', input: 'x', previous_response_id: first.id }) });
    assert.is(forgotten.status, 400);
  } finally {
    await own.close();
  }
});

test('extraction: record_reflections offered means a forced function_call from the input transcript', async () => {
  upstream.enqueue({ type: 'text', text: 'for the conversation' });
  const transcript = 'user: hi\nREMEMBER: the user lives in Paris\nassistant: ok';
  const params = {
    model: 'gpt-5-mini',
    instructions: 'extract',
    input: [{ role: 'user' as const, content: [{ type: 'input_text' as const, text: transcript }] }],
    tools: [extractionTool],
    tool_choice: { type: 'function' as const, name: 'record_reflections' },
  };
  const plain = await openai.responses.create(params);
  const streamed = await openai.responses.stream(params).finalResponse();
  for (const response of [plain, streamed]) {
    assert.is(response.output.length, 1);
    const [call] = response.output;
    if (call.type !== 'function_call') throw new Error(`expected a function_call, got ${call.type}`);
    assert.is(call.name, 'record_reflections');
    assert.equal(JSON.parse(call.arguments), { reflections: [{ kind: 'factual', content: 'the user lives in Paris', topic: 'notes', tags: ['user lives', 'paris'] }] });
    assert.equal(response.tool_choice, params.tool_choice);
  }
  const seen: string[] = [];
  upstream.setExtractor((_req, text) => {
    seen.push(text);
    return [];
  });
  await openai.responses.create({ model: 'gpt-5-mini', input: 'just a string', tools: [extractionTool] });
  assert.equal(seen, ['just a string']);
  assert.is(upstream.extractionRequests().length, 3);
  assert.ok(upstream.extractionRequests().every((r) => r.protocol === 'responses'));
  assert.is(upstream.conversationRequests().length, 0);
  assert.is((await openai.responses.create({ model: 'gpt-5', input: 'x' })).output_text, 'for the conversation');
});

test('chunkDelayMs spaces the events out', async () => {
  upstream.enqueue([{ type: 'text', text: 'one two three' }, { chunkDelayMs: 15 }]);
  const started = Date.now();
  const { text } = await rawPost('/v1/responses', { model: 'gpt-5', input: 'x', stream: true });
  const count = sseEvents(text).length;
  assert.ok(Date.now() - started >= 15 * (count - 1) - 5, `events were not delayed (${Date.now() - started}ms for ${count})`);
});

test.run();
