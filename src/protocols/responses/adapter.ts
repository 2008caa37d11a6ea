/**
 * OpenAI Responses (`POST /v1/responses`), as spoken by Codex CLI, the Agents SDKs and
 * the openai SDK's `responses.create`. The message list is `input` (a string is one
 * user message); items other than messages (function calls, their outputs, reasoning)
 * are carried untouched.
 */
import { EngramError, openAiErrorBody } from '../../errors.js';
import { copilotSessionId, isInstructionContext, isJsonFormat, isObject, looksLikeFailure, requireBasics, stableJson } from '../shared.js';
import {
  type JsonObject,
  type OfferedTool,
  type ProtocolAdapter,
} from '../types.js';
import { tokenUsage } from '../usage.js';
import { noToolCall, parsedArguments } from '../forced-tool.js';
import { assembleResponsesJson, createResponsesAssembler } from './assembler.js';
import { contentText, isMessage, isToolOutput, itemTurns, MESSAGE_ROLES, toolCallOf, toolOutputPieces, toolOutputText } from './items.js';

function inputItems(body: JsonObject): unknown[] {
  return typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : (body.input as unknown[]);
}

function checkItem(item: unknown, index: number): void {
  const where = `input[${index}]`;
  if (!isObject(item)) throw new EngramError('invalid_request', `\`${where}\` must be an object`, { param: where });
  if (item.type !== undefined && typeof item.type !== 'string') {
    throw new EngramError('invalid_request', `\`${where}.type\` must be a string`, { param: `${where}.type` });
  }
  if (item.type === undefined || item.type === 'message') {
    if (typeof item.role !== 'string' || !(MESSAGE_ROLES as readonly string[]).includes(item.role)) {
      throw new EngramError('invalid_request', `\`${where}.role\` must be one of ${MESSAGE_ROLES.map((r) => `'${r}'`).join(', ')}`, {
        param: `${where}.role`,
      });
    }
    if (typeof item.content !== 'string' && !Array.isArray(item.content)) {
      throw new EngramError('invalid_request', `\`${where}.content\` must be a string or an array`, { param: `${where}.content` });
    }
  }
}

export const responses: ProtocolAdapter = {
  id: 'responses',
  upstreamPath: '/v1/responses',
  messagesField: 'input',

  validate(body: unknown): asserts body is JsonObject {
    if (isObject(body) && typeof body.input === 'string') {
      requireBasics({ ...body, input: [] }, 'input');
    } else {
      requireBasics(body, 'input');
      (body.input as unknown[]).forEach(checkItem);
    }
    for (const field of ['instructions', 'previous_response_id'] as const) {
      if (body[field] !== undefined && body[field] !== null && typeof body[field] !== 'string') {
        throw new EngramError('invalid_request', `\`${field}\` must be a string`, { param: field });
      }
    }
    if (body.store !== undefined && body.store !== null && typeof body.store !== 'boolean') {
      throw new EngramError('invalid_request', '`store` must be a boolean', { param: 'store' });
    }
  },
  model: (body) => body.model as string,

  messages: inputItems,
  withMessages: (body, items) => ({ ...body, input: items }),
  isSystemEntry: (item) => isMessage(item) && ['system', 'developer'].includes((item as JsonObject).role as string),
  isUserInput: (item) => isMessage(item) && (item as JsonObject).role === 'user',
  queryText: (item) => (isMessage(item) && (item as JsonObject).role === 'user' ? contentText((item as JsonObject).content) : ''),
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
    return tools.flatMap((tool) =>
      tool.type === 'namespace' && typeof tool.name === 'string' && Array.isArray(tool.tools)
        ? tool.tools.filter(isObject).flatMap((inner) => described(inner, tool.name as string))
        : described(tool),
    );
  },
  appendText(item, text) {
    const message = item as JsonObject;
    if (isToolOutput(message)) {
      const output = message.output;
      if (typeof output === 'string') return { ...message, output: output.length > 0 ? `${output}\n\n${text}` : text };
      return { ...message, output: [...(Array.isArray(output) ? output : []), { type: 'input_text', text }] };
    }
    const content = message.content;
    if (typeof content === 'string') return { ...message, content: content.length > 0 ? `${content}\n\n${text}` : text };
    return { ...message, content: [...(Array.isArray(content) ? content : []), { type: 'input_text', text }] };
  },

  transcript: (body) => itemTurns(inputItems(body)),
  instructions(body) {
    const messages = inputItems(body).filter((item): item is JsonObject => isMessage(item));
    const texts = (role: (role: unknown) => boolean) => messages.filter((m) => role(m.role)).map((m) => contentText(m.content));
    return [
      ...texts((role) => role === 'user').filter(isInstructionContext),
      ...texts((role) => role === 'system' || role === 'developer'),
      ...(typeof body.instructions === 'string' ? [body.instructions] : []),
    ].filter((text) => text.length > 0);
  },
  sessionHint(body) {
    if (typeof body.prompt_cache_key === 'string' && body.prompt_cache_key) return body.prompt_cache_key;
    return copilotSessionId(body.instructions);
  },
  conversationSeed(body) {
    const items = inputItems(body);
    const firstUser = items.findIndex((item) => isMessage(item) && (item as JsonObject).role === 'user');
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
    const { error: inner } = openAiErrorBody(error) as { error: JsonObject };
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
