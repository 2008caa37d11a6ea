/**
 * The forced tool call every protocol can make (`toolRequest` / `toolArguments`): the
 * request offers one tool and requires it, in each protocol's own terms, and the call is
 * read back from answers shaped as each provider sends them for a forced call.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EngramError } from '../../src/errors.js';
import { PROTOCOLS } from '../../src/protocols/index.js';
import type { ForcedTool, ProtocolAdapter } from '../../src/protocols/types.js';

const TOOL: ForcedTool = {
  name: 'record_tags',
  description: 'Record the tags of each reflection.',
  schema: {
    type: 'object',
    properties: { reflections: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'], additionalProperties: false } } },
    required: ['reflections'],
    additionalProperties: false,
  },
};
const ARGS = { reflections: [{ id: 'ref_1', tags: ['brand colours', 'theme'] }] };

test('chat completions: system and user messages, one function tool, tool_choice naming it', () => {
  const request = PROTOCOLS['chat-completions'].toolRequest('gpt-4o-mini', 'You tag memories.', '<reflections>\n[ref_1] (factual) x\n</reflections>', TOOL);
  assert.equal(request, {
    model: 'gpt-4o-mini',
    stream: false,
    messages: [
      { role: 'system', content: 'You tag memories.' },
      { role: 'user', content: '<reflections>\n[ref_1] (factual) x\n</reflections>' },
    ],
    tools: [{ type: 'function', function: { name: 'record_tags', description: 'Record the tags of each reflection.', parameters: TOOL.schema } }],
    tool_choice: { type: 'function', function: { name: 'record_tags' } },
  });
});

test('messages: system prompt (marked for the prompt cache), a user message, one tool with its input_schema, tool_choice of type tool', () => {
  const request = PROTOCOLS.messages.toolRequest('claude-haiku-4-5', 'You tag memories.', 'lines', TOOL);
  assert.equal(request, {
    model: 'claude-haiku-4-5',
    max_tokens: 4096,
    stream: false,
    system: [{ type: 'text', text: 'You tag memories.', cache_control: { type: 'ephemeral' } }],
    messages: [{ role: 'user', content: 'lines' }],
    tools: [{ name: 'record_tags', description: 'Record the tags of each reflection.', input_schema: TOOL.schema }],
    tool_choice: { type: 'tool', name: 'record_tags' },
  });
});

test('responses: instructions, one user input, a strict function tool, nothing stored', () => {
  const request = PROTOCOLS.responses.toolRequest('gpt-5-mini', 'You tag memories.', 'lines', TOOL);
  assert.equal(request, {
    model: 'gpt-5-mini',
    stream: false,
    store: false,
    instructions: 'You tag memories.',
    input: [{ role: 'user', content: 'lines' }],
    tools: [{ type: 'function', name: 'record_tags', description: 'Record the tags of each reflection.', parameters: TOOL.schema, strict: true }],
    tool_choice: { type: 'function', name: 'record_tags' },
  });
});

test('every protocol accepts its own tool request as a request body', () => {
  const adapters: ProtocolAdapter[] = Object.values(PROTOCOLS);
  for (const adapter of adapters) {
    const request = adapter.toolRequest('some-model', 'instructions', 'text', TOOL);
    const checked: ProtocolAdapter = adapter;
    checked.validate(request);
    assert.is(adapter.model(request), 'some-model');
    assert.is(request.stream, false);
    assert.equal(adapter.offeredTools(request).map((tool) => tool.name), ['record_tags']);
  }
});

/** Answers as the providers send them to a forced call: the call after other content, beside a call of another tool. */
const ANSWERS = {
  'chat-completions': {
    id: 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG',
    object: 'chat.completion',
    created: 1741569952,
    model: 'gpt-4o-mini-2024-07-18',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_0', type: 'function', function: { name: 'other_tool', arguments: '{}' } },
            { id: 'call_1', type: 'function', function: { name: 'record_tags', arguments: JSON.stringify(ARGS) } },
          ],
          refusal: null,
          annotations: [],
        },
        logprobs: null,
        // OpenAI ends a forced call with `stop`, not `tool_calls`.
        finish_reason: 'stop',
      },
    ],
    usage: { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 },
    service_tier: 'default',
    system_fingerprint: 'fp_06737a9306',
  },
  messages: {
    id: 'msg_01Aq9w938a90dw8q',
    type: 'message',
    role: 'assistant',
    model: 'claude-haiku-4-5-20251001',
    content: [
      { type: 'text', text: 'Here are the tags.' },
      { type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'record_tags', input: ARGS },
    ],
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage: { input_tokens: 472, output_tokens: 66 },
  },
  responses: {
    id: 'resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b',
    object: 'response',
    created_at: 1741476542,
    status: 'completed',
    model: 'gpt-5-mini-2025-08-07',
    output: [
      { id: 'rs_68c1', type: 'reasoning', summary: [] },
      { id: 'fc_12345xyz', type: 'function_call', status: 'completed', call_id: 'call_12345xyz', name: 'record_tags', arguments: JSON.stringify(ARGS) },
    ],
    parallel_tool_calls: true,
    store: false,
    usage: { input_tokens: 291, output_tokens: 23, total_tokens: 314 },
  },
} as const;

test('usage: every input token, cached or not, and the cached part apart, under each protocol\'s names', () => {
  assert.equal(PROTOCOLS['chat-completions'].usage(ANSWERS['chat-completions']), { inputTokens: 120, outputTokens: 30, cachedInputTokens: 0 });
  assert.equal(PROTOCOLS.messages.usage(ANSWERS.messages), { inputTokens: 472, outputTokens: 66, cachedInputTokens: 0 });
  assert.equal(PROTOCOLS.responses.usage(ANSWERS.responses), { inputTokens: 291, outputTokens: 23, cachedInputTokens: 0 });
  // OpenAI counts cached tokens inside the prompt's; Anthropic beside its input_tokens.
  assert.equal(
    PROTOCOLS['chat-completions'].usage({ usage: { prompt_tokens: 2006, completion_tokens: 300, prompt_tokens_details: { cached_tokens: 1920 } } }),
    { inputTokens: 2006, outputTokens: 300, cachedInputTokens: 1920 },
  );
  assert.equal(
    PROTOCOLS.responses.usage({ usage: { input_tokens: 2006, output_tokens: 300, input_tokens_details: { cached_tokens: 1920 } } }),
    { inputTokens: 2006, outputTokens: 300, cachedInputTokens: 1920 },
  );
  assert.equal(
    PROTOCOLS.messages.usage({ usage: { input_tokens: 86, cache_read_input_tokens: 1920, cache_creation_input_tokens: 0, output_tokens: 300 } }),
    { inputTokens: 2006, outputTokens: 300, cachedInputTokens: 1920 },
  );
  assert.equal(
    PROTOCOLS.messages.usage({ usage: { input_tokens: 86, cache_creation_input_tokens: 1920, output_tokens: 300 } }),
    { inputTokens: 2006, outputTokens: 300, cachedInputTokens: 0 },
    'written to the cache: input, not read from it',
  );
  assert.is(PROTOCOLS.messages.usage({ content: [] }), undefined, 'no usage reported');
});

test('toolArguments reads the named call back, parsed, in each protocol', () => {
  for (const [id, answer] of Object.entries(ANSWERS)) {
    assert.equal(PROTOCOLS[id as keyof typeof ANSWERS].toolArguments(answer, 'record_tags'), ARGS, id);
  }
});

test('toolArguments throws a retryable error when the answer holds no such call, or arguments that are not JSON', () => {
  const noCall = {
    'chat-completions': { choices: [{ message: { role: 'assistant', content: 'I cannot call tools.' } }] },
    messages: { content: [{ type: 'text', text: 'I cannot call tools.' }] },
    responses: { output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'I cannot call tools.' }] }] },
  };
  for (const [id, answer] of Object.entries(noCall)) {
    const adapter = PROTOCOLS[id as keyof typeof noCall];
    assert.throws(() => adapter.toolArguments(answer, 'record_tags'), (error: unknown) => error instanceof EngramError && error.code === 'upstream_stream_failed' && /no record_tags call/.test(error.message), id);
    // The call of another tool is not the one asked for.
    assert.throws(() => adapter.toolArguments(ANSWERS[id as keyof typeof ANSWERS], 'record_reflections'), /no record_reflections call/, id);
    assert.throws(() => adapter.toolArguments(null, 'record_tags'), /no record_tags call/, id);
  }
  const cut = structuredClone(ANSWERS.responses) as any;
  cut.output[1].arguments = '{"reflections": [{"id": "ref_1", "ta';
  assert.throws(() => PROTOCOLS.responses.toolArguments(cut, 'record_tags'), /arguments that are not JSON/);
  const cutChat = structuredClone(ANSWERS['chat-completions']) as any;
  cutChat.choices[0].message.tool_calls[1].function.arguments = 'not json';
  assert.throws(() => PROTOCOLS['chat-completions'].toolArguments(cutChat, 'record_tags'), /arguments that are not JSON/);
});

test.run();
