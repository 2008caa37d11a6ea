import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startScriptedUpstream, type ScriptedUpstream } from './scripted-upstream/index.js';
import { PROTOCOLS } from '../../src/protocols/index.js';

let upstream: ScriptedUpstream;
let openai: OpenAI;
let anthropic: Anthropic;

test.before(async () => {
  upstream = await startScriptedUpstream();
  openai = new OpenAI({ baseURL: `${upstream.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: upstream.url, apiKey: 'sk-ant-test', maxRetries: 0 });
});
test.after(() => upstream.close());
test.before.each(() => upstream.reset());

const weatherTool = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};
const anthropicWeatherTool = { name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } };

async function rawPost(path: string, body: unknown): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const res = await fetch(`${upstream.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

test('openai chat, non-streaming: echoes the last user text and the model, with usage', async () => {
  const completion = await openai.chat.completions.create({
    model: 'gpt-4o-mini',
    messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hello there' }],
  });
  assert.is(completion.object, 'chat.completion');
  assert.is(completion.model, 'gpt-4o-mini');
  assert.is(completion.created, 1700000000);
  assert.match(completion.id, /^chatcmpl-[0-9a-f]{24}$/);
  assert.is(completion.choices[0].message.content, 'echo: hello there');
  assert.is(completion.choices[0].finish_reason, 'stop');
  assert.ok(completion.usage!.prompt_tokens > 0);
  assert.is(completion.usage!.total_tokens, completion.usage!.prompt_tokens + completion.usage!.completion_tokens);

  assert.is(upstream.requests.length, 1);
  const [req] = upstream.conversationRequests();
  assert.is(req.method, 'POST');
  assert.is(req.path, '/v1/chat/completions');
  assert.is(req.protocol, 'chat-completions');
  assert.is(req.extraction, false);
  assert.is(req.headers.authorization, 'Bearer sk-test');
  assert.is(req.json.model, 'gpt-4o-mini');
  assert.equal(JSON.parse(req.raw.toString('utf8')), req.json);
});

test('openai chat, streaming: several content deltas, a finish_reason and a usage chunk', async () => {
  upstream.enqueue({ type: 'text', text: 'The quick brown fox jumps over the lazy dog.' });
  const stream = await openai.chat.completions.create({
    model: 'gpt-4o',
    messages: [{ role: 'user', content: 'go' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  const deltas: string[] = [];
  let finish: string | null = null;
  let usage: OpenAI.CompletionUsage | null | undefined;
  for await (const chunk of stream) {
    assert.is(chunk.object, 'chat.completion.chunk');
    assert.is(chunk.model, 'gpt-4o');
    const choice = chunk.choices[0];
    if (choice?.delta.content) deltas.push(choice.delta.content);
    if (choice?.finish_reason) finish = choice.finish_reason;
    if (chunk.usage) usage = chunk.usage;
  }
  assert.ok(deltas.length >= 3, `expected several deltas, got ${deltas.length}`);
  assert.is(deltas.join(''), 'The quick brown fox jumps over the lazy dog.');
  assert.is(finish, 'stop');
  assert.ok(usage && usage.completion_tokens > 0);
});

test('openai chat: the stream helper assembles a final completion', async () => {
  const final = await openai.chat.completions
    .stream({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'assemble me' }], stream_options: { include_usage: true } })
    .finalChatCompletion();
  assert.is(final.choices[0].message.content, 'echo: assemble me');
  assert.is(final.choices[0].message.role, 'assistant');
  assert.is(final.choices[0].finish_reason, 'stop');
  assert.ok(final.usage);
});

test('openai chat: tool call, streamed in fragments and not streamed', async () => {
  const call = { type: 'tool_call' as const, name: 'get_weather', arguments: { city: 'Paris', units: 'celsius' } };
  upstream.enqueue(call, call);
  const params = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'weather?' }], tools: [weatherTool] };

  const plain = await openai.chat.completions.create(params);
  const toolCall = plain.choices[0].message.tool_calls![0];
  assert.is(plain.choices[0].finish_reason, 'tool_calls');
  assert.is(plain.choices[0].message.content, null);
  assert.is(toolCall.type, 'function');
  assert.match(toolCall.id, /^call_[0-9a-f]{24}$/);
  if (toolCall.type !== 'function') throw new Error('not a function call');
  assert.is(toolCall.function.name, 'get_weather');
  assert.equal(JSON.parse(toolCall.function.arguments), call.arguments);

  const stream = await openai.chat.completions.create({ ...params, stream: true });
  const fragments: string[] = [];
  let finish: string | null = null;
  for await (const chunk of stream) {
    for (const tc of chunk.choices[0]?.delta.tool_calls ?? []) if (tc.function?.arguments) fragments.push(tc.function.arguments);
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  assert.ok(fragments.length >= 2, `expected 2+ argument fragments, got ${fragments.length}`);
  assert.equal(JSON.parse(fragments.join('')), call.arguments);
  assert.is(finish, 'tool_calls');
});

test('openai chat: text before a tool call, through the stream helper', async () => {
  upstream.enqueue({ type: 'tool_call', name: 'get_weather', arguments: { city: 'Oslo' }, id: 'call_fixed', text: 'Let me check.' });
  const final = await openai.chat.completions
    .stream({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'weather?' }], tools: [weatherTool] })
    .finalChatCompletion();
  const message = final.choices[0].message;
  assert.is(message.content, 'Let me check.');
  assert.is(message.tool_calls![0].id, 'call_fixed');
  assert.is(final.choices[0].finish_reason, 'tool_calls');
});

test('anthropic messages, non-streaming: text with usage and end_turn', async () => {
  const message = await anthropic.messages.create({
    model: 'claude-sonnet-4-6',
    max_tokens: 1024,
    system: 'be brief',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'hi claude' }] }],
  });
  assert.match(message.id, /^msg_[0-9a-f]{24}$/);
  assert.is(message.model, 'claude-sonnet-4-6');
  assert.is(message.stop_reason, 'end_turn');
  assert.equal(message.content, [{ type: 'text', text: 'echo: hi claude' }]);
  assert.ok(message.usage.input_tokens > 0 && message.usage.output_tokens > 0);

  const [req] = upstream.conversationRequests();
  assert.is(req.protocol, 'messages');
  // Newer SDKs send the key as a bearer token, older ones as x-api-key.
  assert.ok(req.headers['x-api-key'] === 'sk-ant-test' || req.headers.authorization === 'Bearer sk-ant-test');
  assert.ok(req.headers['anthropic-version']);
});

test('anthropic messages, streaming: finalMessage assembles the deltas', async () => {
  upstream.enqueue({ type: 'text', text: 'Streaming answers arrive in several small pieces.' });
  const stream = anthropic.messages.stream({ model: 'claude-haiku-4-5', max_tokens: 1024, messages: [{ role: 'user', content: 'go' }] });
  const deltas: string[] = [];
  stream.on('text', (delta) => deltas.push(delta));
  const message = await stream.finalMessage();
  assert.ok(deltas.length >= 3, `expected several deltas, got ${deltas.length}`);
  assert.is(message.model, 'claude-haiku-4-5');
  assert.equal(message.content, [{ type: 'text', text: 'Streaming answers arrive in several small pieces.' }]);
  assert.is(message.stop_reason, 'end_turn');
  assert.ok(message.usage.output_tokens > 1);
});

test('anthropic messages: tool_use, streamed through input_json_delta and not streamed', async () => {
  const call = { type: 'tool_call' as const, name: 'get_weather', arguments: { city: 'Lyon', days: 3 }, text: 'Checking.' };
  upstream.enqueue(call, call);
  const params = { model: 'claude-sonnet-4-6', max_tokens: 1024, messages: [{ role: 'user' as const, content: 'weather?' }], tools: [anthropicWeatherTool] };

  const plain = await anthropic.messages.create(params);
  assert.is(plain.stop_reason, 'tool_use');
  assert.is(plain.content[0].type, 'text');
  const use = plain.content[1];
  if (use.type !== 'tool_use') throw new Error(`expected tool_use, got ${use.type}`);
  assert.match(use.id, /^toolu_[0-9a-f]{24}$/);
  assert.equal(use.input, call.arguments);

  const stream = anthropic.messages.stream(params);
  const partials: string[] = [];
  stream.on('inputJson', (partial) => partials.push(partial));
  const final = await stream.finalMessage();
  assert.ok(partials.filter((p) => p.length > 0).length >= 2);
  assert.is(final.stop_reason, 'tool_use');
  assert.equal(final.content, plain.content);
});

test('anthropic messages: thinking block with a signature, streamed and not', async () => {
  const reply = { type: 'text' as const, text: 'Forty-two.', thinking: 'The user wants the answer to everything.' };
  upstream.enqueue(reply, reply);
  const params = {
    model: 'claude-sonnet-4-6',
    max_tokens: 2048,
    thinking: { type: 'enabled' as const, budget_tokens: 1024 },
    messages: [{ role: 'user' as const, content: 'the answer?' }],
  };
  const plain = await anthropic.messages.create(params);
  const final = await anthropic.messages.stream(params).finalMessage();
  for (const message of [plain, final]) {
    const [thinking, text] = message.content;
    if (thinking.type !== 'thinking') throw new Error(`expected thinking, got ${thinking.type}`);
    assert.is(thinking.thinking, reply.thinking);
    assert.ok(thinking.signature.length > 10);
    assert.equal(text, { type: 'text', text: 'Forty-two.' });
  }
  assert.equal(final.content, plain.content);
});

test('extraction: a forced record_reflections call from the default extractor, queue untouched', async () => {
  upstream.enqueue({ type: 'text', text: 'for the conversation' });
  const transcript = 'user: hi\nREMEMBER: the user lives in Paris\nAVOID:  running migrations on Fridays \nassistant: ok';
  const extraction = await openai.chat.completions.create({
    model: 'gpt-4o-mini',
    messages: [{ role: 'system', content: 'extract' }, { role: 'user', content: transcript }],
    tools: [{ type: 'function', function: { name: 'record_reflections', parameters: { type: 'object' } } }],
    tool_choice: { type: 'function', function: { name: 'record_reflections' } },
  });
  const call = extraction.choices[0].message.tool_calls![0];
  if (call.type !== 'function') throw new Error('not a function call');
  assert.is(call.function.name, 'record_reflections');
  assert.equal(JSON.parse(call.function.arguments), {
    reflections: [
      { kind: 'factual', content: 'the user lives in Paris', topic: 'notes', tags: ['user lives', 'paris'] },
      { kind: 'procedural', content: 'running migrations on Fridays', topic: 'notes', tags: ['running migrations', 'fridays'] },
    ],
  });

  const viaMessages = await anthropic.messages.create({
    model: 'claude-haiku-4-5',
    max_tokens: 1024,
    messages: [{ role: 'user', content: 'nothing worth keeping' }],
    tools: [{ name: 'record_reflections', input_schema: { type: 'object' } }],
    tool_choice: { type: 'tool', name: 'record_reflections' },
  });
  assert.is(viaMessages.stop_reason, 'tool_use');
  const use = viaMessages.content[0];
  if (use.type !== 'tool_use') throw new Error('not tool_use');
  assert.equal(use.input, { reflections: [] });

  assert.is(upstream.extractionRequests().length, 2);
  assert.is(upstream.conversationRequests().length, 0);
  const conversation = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] });
  assert.is(conversation.choices[0].message.content, 'for the conversation');
});

test('extraction: a custom extractor sees the transcript and may script a failure', async () => {
  const seen: string[] = [];
  upstream.setExtractor((_req, transcript) => {
    seen.push(transcript);
    return seen.length === 1 ? [{ kind: 'factual', content: 'likes tea', topic: 'drinks' }] : { type: 'error', status: 500 };
  });
  const params = {
    model: 'claude-haiku-4-5',
    max_tokens: 1024,
    messages: [
      { role: 'user' as const, content: 'first' },
      { role: 'assistant' as const, content: 'reply' },
      { role: 'user' as const, content: [{ type: 'text' as const, text: 'second' }] },
    ],
    tools: [{ name: 'record_reflections', input_schema: { type: 'object' as const } }],
  };
  const ok = await anthropic.messages.create(params);
  assert.equal((ok.content[0] as Anthropic.ToolUseBlock).input, { reflections: [{ kind: 'factual', content: 'likes tea', topic: 'drinks' }] });
  try {
    await anthropic.messages.create(params);
    assert.unreachable('expected an error');
  } catch (error) {
    assert.instance(error, Anthropic.APIError);
    assert.is((error as InstanceType<typeof Anthropic.APIError>).status, 500);
  }
  assert.equal(seen, ['first\nsecond', 'first\nsecond']);
});

test('tagging: each protocol\'s forced record_tags request gets the default tagger\'s tags, read back by the adapter', async () => {
  const tool = { name: 'record_tags', description: 'Record tags.', schema: { type: 'object', properties: {}, additionalProperties: false } };
  const text = '<reflections>\n[ref_a] (factual) Design tokens come from packages/ui/tokens.json\n[ref_b] (procedural) Run make migrate first\n</reflections>';
  for (const adapter of Object.values(PROTOCOLS)) {
    const sent = await rawPost(adapter.upstreamPath, adapter.toolRequest('gpt-4o-mini', 'Tag these.', text, tool));
    assert.is(sent.status, 200, adapter.id);
    assert.equal(adapter.toolArguments(JSON.parse(sent.bytes.toString('utf8')), 'record_tags'), {
      reflections: [
        { id: 'ref_a', tags: ['design tokens', 'come packages', 'json'] },
        { id: 'ref_b', tags: ['make migrate', 'first'] },
      ],
    }, adapter.id);
  }
  assert.is(upstream.taggingRequests().length, 3);
  assert.is(upstream.extractionRequests().length, 0);
  assert.is(upstream.conversationRequests().length, 0, 'tagging calls are not conversation requests');

  upstream.setTagger((req, lines) => (req.json.model === 'refuse' ? { type: 'error', status: 400 } : lines.map(({ id }) => ({ id, tags: ['brand colours'] }))));
  const scripted = await rawPost('/v1/messages', PROTOCOLS.messages.toolRequest('claude-haiku-4-5', 'Tag these.', text, tool));
  assert.equal(PROTOCOLS.messages.toolArguments(JSON.parse(scripted.bytes.toString('utf8')), 'record_tags'), {
    reflections: [{ id: 'ref_a', tags: ['brand colours'] }, { id: 'ref_b', tags: ['brand colours'] }],
  });
  assert.is((await rawPost('/v1/messages', PROTOCOLS.messages.toolRequest('refuse', 'Tag these.', text, tool))).status, 400);
});

test('error replies surface as each SDK\'s APIError with the status and envelope', async () => {
  upstream.enqueue({ type: 'error', status: 429, headers: { 'retry-after': '7' } }, { type: 'error', status: 529 });
  try {
    await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] });
    assert.unreachable('expected an error');
  } catch (error) {
    assert.instance(error, OpenAI.APIError);
    const e = error as InstanceType<typeof OpenAI.APIError>;
    assert.is(e.status, 429);
    assert.is(e.code, 'rate_limit_exceeded');
    assert.is(e.headers?.get('retry-after'), '7');
  }
  try {
    await anthropic.messages.stream({ model: 'claude-sonnet-4-6', max_tokens: 1024, messages: [{ role: 'user', content: 'x' }] }).finalMessage();
    assert.unreachable('expected an error');
  } catch (error) {
    assert.instance(error, Anthropic.APIError);
    const e = error as InstanceType<typeof Anthropic.APIError>;
    assert.is(e.status, 529);
    assert.is((e.error as any)?.error?.type, 'overloaded_error');
  }
});

test('error replies after N events arrive in-stream, as the providers send them', async () => {
  upstream.enqueue({ type: 'error', status: 529, afterEvents: 3 }, { type: 'error', status: 500, afterEvents: 2 });
  const stream = anthropic.messages.stream({ model: 'claude-sonnet-4-6', max_tokens: 1024, messages: [{ role: 'user', content: 'x' }] });
  try {
    await stream.finalMessage();
    assert.unreachable('expected an error');
  } catch (error) {
    assert.instance(error, Anthropic.APIError);
    assert.is((error as any).error?.error?.type, 'overloaded_error');
  }
  const chat = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], stream: true });
  const seen: string[] = [];
  try {
    for await (const chunk of chat) seen.push(chunk.choices[0]?.delta.content ?? '');
    assert.unreachable('expected an error');
  } catch (error) {
    assert.instance(error, OpenAI.APIError);
    assert.is((error as any).type, 'server_error');
  }
  assert.is(seen.length, 2);
});

test('break replies make the SDK streams throw; non-streaming breaks are connection errors', async () => {
  upstream.enqueue({ type: 'break', afterEvents: 2 }, { type: 'break', afterEvents: 3 }, { type: 'break', afterEvents: 0 });
  const chat = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], stream: true });
  let chunks = 0;
  try {
    for await (const _ of chat) chunks++;
    assert.unreachable('expected the stream to throw');
  } catch (error) {
    // undici's word for a body cut off mid-way; anything else would be a different failure.
    assert.match((error as Error).message, /terminated/);
  }
  assert.is(chunks, 2);

  const stream = anthropic.messages.stream({ model: 'claude-sonnet-4-6', max_tokens: 1024, messages: [{ role: 'user', content: 'x' }] });
  const texts: string[] = [];
  stream.on('text', (t) => texts.push(t));
  try {
    await stream.finalMessage();
    assert.unreachable('expected the stream to throw');
  } catch (error) {
    // undici's word for a body cut off mid-way; anything else would be a different failure.
    assert.match((error as Error).message, /terminated/);
  }
  assert.is(texts.length, 0); // message_start, content_block_start, ping: no text yet

  try {
    await anthropic.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 1024, messages: [{ role: 'user', content: 'x' }] });
    assert.unreachable('expected a connection error');
  } catch (error) {
    assert.instance(error, Anthropic.APIConnectionError);
  }
  assert.is(upstream.conversationRequests().length, 3);
});

test('byte determinism: identical requests get identical bytes, streamed or not, in both protocols', async () => {
  const chatBody = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'same again' }], stream: true, stream_options: { include_usage: true } };
  const messagesBody = { model: 'claude-sonnet-4-6', max_tokens: 100, messages: [{ role: 'user', content: 'same again' }], stream: true };
  const tool = { type: 'tool_call' as const, name: 'get_weather', arguments: { city: 'Rome' } };
  for (const [path, body] of [
    ['/v1/chat/completions', chatBody],
    ['/v1/chat/completions', { ...chatBody, stream: false }],
    ['/v1/messages', messagesBody],
    ['/v1/messages', { ...messagesBody, stream: false }],
  ] as const) {
    upstream.enqueue(tool, tool);
    const a = await rawPost(path, body);
    const b = await rawPost(path, body);
    const c = await rawPost(path, body); // default echo reply
    const d = await rawPost(path, body);
    assert.is(a.status, 200);
    assert.ok(a.bytes.equals(b.bytes), `${path} tool call bytes differ`);
    assert.ok(c.bytes.equals(d.bytes), `${path} echo bytes differ`);
    assert.not.ok(a.bytes.equals(c.bytes));
    assert.equal([...a.headers], [...b.headers]);
    if (body.stream) assert.is(a.headers.get('content-type'), 'text/event-stream; charset=utf-8');
  }
  const chatText = (await rawPost('/v1/chat/completions', chatBody)).bytes.toString('utf8');
  assert.ok(chatText.endsWith('data: [DONE]\n\n'));
  assert.match(chatText, /"choices":\[\],"usage":\{"prompt_tokens"/);
});

test('options: pingEvery adds ping events, chunkDelayMs spaces events out', async () => {
  const body = { model: 'claude-sonnet-4-6', max_tokens: 100, messages: [{ role: 'user', content: 'one two three four five six' }], stream: true };
  const defaultPings = (await rawPost('/v1/messages', body)).bytes.toString('utf8').match(/event: ping\n/g) ?? [];
  assert.is(defaultPings.length, 1);

  upstream.enqueue([{ type: 'text', text: 'one two three four five six' }, { pingEvery: 2, chunkDelayMs: 20 }]);
  const started = Date.now();
  const text = (await rawPost('/v1/messages', body)).bytes.toString('utf8');
  const elapsed = Date.now() - started;
  const pings = text.match(/event: ping\n/g) ?? [];
  const events = text.match(/^event: /gm) ?? [];
  assert.ok(pings.length >= 3, `expected several pings, got ${pings.length}`);
  assert.ok(elapsed >= 20 * (events.length - 1) - 5, `events were not delayed (${elapsed}ms for ${events.length})`);
});

test('other routes: models, count_tokens, HEAD /, query strings, 404 in OpenAI shape', async () => {
  const models = await openai.models.list();
  assert.ok(models.data.length > 0);
  assert.is(models.data[0].object, 'model');
  const anthropicModels = await anthropic.models.list();
  assert.ok(anthropicModels.data.some((m) => m.id.startsWith('claude')));

  const counted = await anthropic.messages.countTokens({ model: 'claude-sonnet-4-6', messages: [{ role: 'user', content: 'count me' }] });
  const countReq = upstream.requests[upstream.requests.length - 1];
  assert.is(counted.input_tokens, Math.round(JSON.stringify(countReq.json).length / 4));
  assert.is(countReq.protocol, 'other');

  const head = await fetch(`${upstream.url}/`, { method: 'HEAD' });
  assert.is(head.status, 200);

  const beta = await rawPost('/v1/messages?beta=true', { model: 'claude-sonnet-4-6', max_tokens: 10, messages: [{ role: 'user', content: 'beta' }] });
  assert.is(JSON.parse(beta.bytes.toString('utf8')).content[0].text, 'echo: beta');
  assert.is(upstream.conversationRequests()[0].path, '/v1/messages?beta=true');

  const missing = await rawPost('/v1/embeddings', { model: 'x' });
  assert.is(missing.status, 404);
  assert.equal(JSON.parse(missing.bytes.toString('utf8')), {
    error: { message: 'Invalid URL (POST /v1/embeddings)', type: 'invalid_request_error', param: null, code: null },
  });
  assert.is(upstream.conversationRequests().length, 1);
  assert.ok(upstream.requests.length >= 5);
});

test('setDefaultReply and reset', async () => {
  upstream.setDefaultReply((req) => ({ type: 'text', text: `model ${req.json.model}` }));
  upstream.enqueue({ type: 'text', text: 'queued' }, { type: 'text', text: 'dropped by reset' });
  const first = await openai.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'a' }] });
  const second = await openai.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'a' }] });
  assert.is(first.choices[0].message.content, 'queued');
  assert.is(second.choices[0].message.content, 'dropped by reset');
  upstream.enqueue({ type: 'text', text: 'gone' });
  upstream.reset();
  assert.is(upstream.requests.length, 0);
  const third = await openai.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'a' }] });
  assert.is(third.choices[0].message.content, 'echo: a');
});

test('hang: the client times out, and close() ends hanging and keep-alive connections promptly', async () => {
  const own = await startScriptedUpstream();
  own.enqueue({ type: 'hang' }, { type: 'hang' });
  const client = new OpenAI({ baseURL: `${own.url}/v1`, apiKey: 'k', maxRetries: 0, timeout: 200 });
  try {
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] });
    assert.unreachable('expected a timeout');
  } catch (error) {
    assert.instance(error, OpenAI.APIConnectionTimeoutError);
  }
  const hanging = fetch(`${own.url}/v1/messages`, { method: 'POST', body: JSON.stringify({ model: 'm', messages: [] }) }).then(
    () => 'answered',
    () => 'failed',
  );
  own.enqueue([{ type: 'text', text: 'a slow stream of many words that takes ages' }, { chunkDelayMs: 10_000 }]);
  const slow = await fetch(`${own.url}/v1/messages`, { method: 'POST', body: JSON.stringify({ model: 'm', messages: [], stream: true }) });
  const slowBody = slow.text().then(
    () => 'finished',
    () => 'failed',
  );
  await new Promise((r) => setTimeout(r, 50));
  assert.is(own.requests.length, 3);
  const started = Date.now();
  await own.close();
  assert.ok(Date.now() - started < 5000, 'close() waited for open connections');
  assert.is(await hanging, 'failed');
  assert.is(await slowBody, 'failed');
});

test.run();
