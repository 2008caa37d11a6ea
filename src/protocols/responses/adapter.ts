/**
 * OpenAI Responses (`POST /v1/responses`), as spoken by Codex CLI, the Agents SDKs and
 * the openai SDK's `responses.create`. The message list is `input` (a string is one
 * user message); items other than messages (function calls, their outputs, reasoning)
 * are carried untouched.
 */
import { z } from 'zod';
import { EngramError, openAiErrorBody } from '../../errors.js';
import { isJsonFormat, isObject, looksLikeFailure, stableJson } from '../shared.js';
import type { JsonObject, OfferedTool, ProtocolAdapter } from '../types.js';
import { tokenUsage } from '../usage.js';
import { noToolCall, parsedArguments } from '../forced-tool.js';
import { assembleResponsesJson, createResponsesAssembler } from './assembler.js';
import { contentText, isMessage, isToolOutput, itemTurns, MESSAGE_ROLES, toolCallOf, toolOutputPieces, toolOutputText } from './items.js';

function inputItems(body: JsonObject): unknown[] {
  if (typeof body.input === 'string') return [{ role: 'user', content: body.input }];
  // The body's own array (`RequestCodec.messages`): `validate` made sure there is one.
  return Array.isArray(body.input) ? body.input : [];
}

/** The fields `validate` checks before the items, and after them; any other field passes as it is. */
const REQUEST = z.object({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(z.unknown())], { error: 'must be an array' }),
  stream: z.boolean({ error: 'must be a boolean' }).optional(),
});
const REQUEST_OPTIONS = z.object({
  instructions: z.string({ error: 'must be a string' }).nullish(),
  previous_response_id: z.string({ error: 'must be a string' }).nullish(),
  store: z.boolean({ error: 'must be a boolean' }).nullish(),
});
/** Any input item; a message (typed `message`, or with no type) is checked as `MESSAGE` too. */
const ITEM = z.object({ type: z.string({ error: 'must be a string' }).optional() }, { error: 'must be an object' });
const MESSAGE = z.object({
  role: z.enum(MESSAGE_ROLES, { error: `must be one of ${MESSAGE_ROLES.map((r) => `'${r}'`).join(', ')}` }),
  content: z.union([z.string(), z.array(z.unknown())], { error: 'must be a string or an array' }),
});
/** A namespace of tools (Codex's MCP servers): its functions are offered under its name. */
const NAMESPACE = z.object({ type: z.literal('namespace'), name: z.string(), tools: z.array(z.unknown()) });

/**
 * `value` (at `at` in the body) as `schema` takes it, or the 400 naming the first thing
 * wrong: its path in brackets and dots (`input[0].role`), as the provider's own errors do.
 */
function check<T>(schema: z.ZodType<unknown, T>, value: unknown, at?: string): asserts value is T {
  const result = schema.safeParse(value);
  if (result.success) return;
  const [issue] = result.error.issues;
  const param = [at, ...issue.path.map(String)].filter((part) => part !== undefined).join('.');
  if (param === '') throw new EngramError('invalid_request', 'The request body must be a JSON object');
  if (param === 'model') throw new EngramError('missing_model', 'you must provide a model parameter', { param });
  throw new EngramError('invalid_request', `\`${param}\` ${issue.message}`, { param });
}

export const responses: ProtocolAdapter = {
  id: 'responses',
  upstreamPath: '/v1/responses',
  messagesField: 'input',

  validate(body: unknown): asserts body is JsonObject {
    check(REQUEST, body);
    if (Array.isArray(body.input)) {
      body.input.forEach((item: unknown, index) => {
        check(ITEM, item, `input[${index}]`);
        if (item.type === undefined || item.type === 'message') check(MESSAGE, item, `input[${index}]`);
      });
    }
    check(REQUEST_OPTIONS, body);
  },
  model: (body) => (typeof body.model === 'string' ? body.model : ''),

  messages: inputItems,
  withMessages: (body, items) => ({ ...body, input: items }),
  isSystemEntry: (item) => isMessage(item) && (item.role === 'system' || item.role === 'developer'),
  isUserInput: (item) => isMessage(item) && item.role === 'user',
  queryText: (item) => (isMessage(item) && item.role === 'user' ? contentText(item.content) : ''),
  isToolResult: isToolOutput,
  toolResultFailed: (item) => isToolOutput(item) && looksLikeFailure(toolOutputText(item)),
  calledTools(item) {
    if (!isObject(item) || (item.type !== 'function_call' && item.type !== 'custom_tool_call') || typeof item.name !== 'string') return [];
    return [{ name: item.name, ...(typeof item.namespace === 'string' ? { namespace: item.namespace } : {}) }];
  },
  toolCalls(item) {
    const call = toolCallOf(item);
    return call ? [call] : [];
  },
  toolOutputs: toolOutputPieces,
  structuredAnswer: (body) => isJsonFormat(isObject(body.text) ? body.text.format : undefined),
  offeredTools(body) {
    const described = (tool: JsonObject, namespace?: string): OfferedTool[] =>
      typeof tool.name === 'string'
        ? [{ name: tool.name, description: typeof tool.description === 'string' ? tool.description : '', ...(namespace ? { namespace } : {}) }]
        : [];
    const tools = Array.isArray(body.tools) ? body.tools.filter(isObject) : [];
    return tools.flatMap((tool) => {
      // Parsed only when it says it is a namespace: a failed parse costs far more than a passed one.
      const namespace = tool.type === 'namespace' ? NAMESPACE.safeParse(tool) : undefined;
      return namespace?.success ? namespace.data.tools.filter(isObject).flatMap((inner) => described(inner, namespace.data.name)) : described(tool);
    });
  },
  appendText(item, text) {
    const message = isObject(item) ? item : {};
    const field = isToolOutput(item) ? 'output' : 'content';
    const value = message[field];
    if (typeof value === 'string') return { ...message, [field]: value.length > 0 ? `${value}\n\n${text}` : text };
    return { ...message, [field]: [...(Array.isArray(value) ? value : []), { type: 'input_text', text }] };
  },

  transcript: (body, isInstructionFile) => itemTurns(inputItems(body), isInstructionFile),
  instructions(body, isInstructionFile) {
    const messages = inputItems(body).filter((item): item is JsonObject => isMessage(item));
    const texts = (role: (role: unknown) => boolean) => messages.filter((m) => role(m.role)).map((m) => contentText(m.content));
    return [
      ...texts((role) => role === 'user').filter(isInstructionFile),
      ...texts((role) => role === 'system' || role === 'developer'),
      ...(typeof body.instructions === 'string' ? [body.instructions] : []),
    ].filter((text) => text.length > 0);
  },
  systemPrompt: (body) => body.instructions,
  conversationSeed(body) {
    const items = inputItems(body);
    const firstUser = items.findIndex((item) => isMessage(item) && item.role === 'user');
    return stableJson([body.instructions ?? null, ...items.slice(0, firstUser === -1 ? 1 : firstUser + 1)]);
  },

  chain: {
    previousId: (body) => (typeof body.previous_response_id === 'string' && body.previous_response_id ? body.previous_response_id : undefined),
    expand(body, history) {
      const { previous_response_id: _dropped, ...rest } = body;
      return { ...rest, input: [...history, ...inputItems(body)] };
    },
    stored: (body) => body.store !== false,
  },

  createAssembler: createResponsesAssembler,
  assembleJson: assembleResponsesJson,

  upstreamAuth: (apiKey) => ({ authorization: `Bearer ${apiKey}` }),
  renderError: (error) => ({ status: error.status, body: openAiErrorBody(error) }),
  streamErrorFrame(error) {
    const { error: inner } = openAiErrorBody(error);
    return `event: error\ndata: ${JSON.stringify({ type: 'error', code: inner.code, message: inner.message, param: inner.param })}\n\n`;
  },

  toolRequest(model, instructions, userText, tool) {
    return {
      model,
      stream: false,
      // Nothing of Engram's own calls is kept by the provider.
      store: false,
      instructions,
      input: [{ role: 'user', content: userText }],
      // Strict: the model's arguments follow the schema exactly (`ForcedTool` says what that asks of it).
      tools: [{ type: 'function', name: tool.name, description: tool.description, parameters: tool.schema, strict: true }],
      tool_choice: { type: 'function', name: tool.name },
    };
  },
  toolArguments(body, toolName) {
    const output = isObject(body) && Array.isArray(body.output) ? body.output : [];
    for (const item of output) {
      if (isObject(item) && item.type === 'function_call' && item.name === toolName && typeof item.arguments === 'string') {
        return parsedArguments(item.arguments, toolName);
      }
    }
    throw noToolCall(toolName);
  },
  usage: (body) => tokenUsage(body, { input: 'input_tokens', output: 'output_tokens', cached: ['input_tokens_details', 'cached_tokens'] }),
};
