/**
 * OpenAI Chat Completions (`POST /v1/chat/completions`), as spoken by the openai SDKs,
 * Copilot CLI's default wire and most OpenAI-compatible gateways.
 */
import { openAiErrorBody } from '../../errors.js';
import type { Turn } from '../../domain/transcript.js';
import { isJsonFormat, isObject, looksLikeFailure, messageListBasics, partsText, renderToolCall, requireMessages, stableJson, toolInput } from '../shared.js';
import type { JsonObject, ProtocolAdapter } from '../types.js';
import { assembleChatJson, createChatAssembler } from './assembler.js';
import { tokenUsage } from '../usage.js';
import { noToolCall, parsedArguments } from '../forced-tool.js';

const ROLES = ['system', 'developer', 'user', 'assistant', 'tool', 'function'] as const;

/** Text of a string or an array of content parts; non-text parts become placeholders. */
function contentText(content: unknown): string {
  return partsText(content, (part) => {
    if (part.type === 'text' && typeof part.text === 'string') return part.text;
    if (part.type === 'image_url') return '[image]';
    if (part.type === 'input_audio') return '[audio]';
    if (part.type === 'file') return '[file]';
    if (part.type === 'refusal' && typeof part.refusal === 'string') return part.refusal;
    return '';
  });
}

/** The text parts of a content (a string is one), uncopied: tool outputs can be huge. */
function textPieces(content: unknown): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  return content.flatMap((part) => (isObject(part) && part.type === 'text' && typeof part.text === 'string' ? [part.text] : []));
}

/** The functions an assistant message calls: `tool_calls`, and the legacy single `function_call`. */
function calledFunctions(message: unknown): Array<JsonObject & { name: string }> {
  if (!isObject(message) || message.role !== 'assistant') return [];
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  const legacy = isObject(message.function_call) ? [{ function: message.function_call }] : [];
  return [...calls, ...legacy]
    .map((call) => (isObject(call) && isObject(call.function) ? call.function : undefined))
    .filter((fn): fn is JsonObject & { name: string } => isObject(fn) && typeof fn.name === 'string');
}

const isToolMessage = (message: unknown): message is JsonObject => isObject(message) && (message.role === 'tool' || message.role === 'function');

function turnOf(message: JsonObject): Turn | undefined {
  switch (message.role) {
    case 'user':
      return { role: 'user', text: contentText(message.content) };
    case 'assistant': {
      const calls = Array.isArray(message.tool_calls)
        ? message.tool_calls.filter(isObject).map((call) => {
            const fn = isObject(call.function) ? call.function : {};
            return renderToolCall(String(fn.name ?? ''), fn.arguments);
          })
        : [];
      const text = [contentText(message.content), ...calls].filter(Boolean).join('\n');
      return { role: 'assistant', text };
    }
    case 'tool':
    case 'function':
      return { role: 'tool', text: contentText(message.content) };
    default:
      return undefined;
  }
}

export const chatCompletions: ProtocolAdapter = {
  id: 'chat-completions',
  ...messageListBasics,
  upstreamPath: '/v1/chat/completions',

  validate(body: unknown): asserts body is JsonObject {
    requireMessages(body, ROLES);
  },
  isSystemEntry: (message) => isObject(message) && (message.role === 'system' || message.role === 'developer'),
  isUserInput: (message) => isObject(message) && message.role === 'user',
  isToolResult: isToolMessage,
  toolResultFailed: (message) => isToolMessage(message) && looksLikeFailure(contentText(message.content)),
  calledTools: (message) => calledFunctions(message).map((fn) => ({ name: fn.name })),
  toolCalls: (message) => calledFunctions(message).map((fn) => ({ name: fn.name, input: toolInput(fn.arguments) })),
  toolOutputs: (message) => (isToolMessage(message) ? textPieces(message.content) : []),
  structuredAnswer: (body) => isJsonFormat(body.response_format),
  offeredTools(body) {
    const tools = Array.isArray(body.tools) ? body.tools.map((tool) => (isObject(tool) ? tool.function : undefined)) : [];
    const functions = Array.isArray(body.functions) ? body.functions : [];
    return [...tools, ...functions].flatMap((fn) =>
      isObject(fn) && typeof fn.name === 'string' ? [{ name: fn.name, description: typeof fn.description === 'string' ? fn.description : '' }] : [],
    );
  },
  queryText: (message) => (isObject(message) && message.role === 'user' ? contentText(message.content) : ''),

  transcript(body) {
    return (body.messages as JsonObject[]).map(turnOf).filter((turn): turn is Turn => turn !== undefined && turn.text.length > 0);
  },
  instructions(body, isInstructionFile) {
    const list = (body.messages as unknown[]).filter(isObject);
    return [
      ...list.filter((m) => m.role === 'user').flatMap((m) => textPieces(m.content).filter(isInstructionFile)),
      ...list.filter((m) => m.role === 'system' || m.role === 'developer').flatMap((m) => textPieces(m.content)),
    ];
  },
  systemPrompt(body) {
    const first = (body.messages as JsonObject[])[0];
    return first && (first.role === 'system' || first.role === 'developer') ? first.content : undefined;
  },
  conversationSeed(body) {
    const messages = body.messages as JsonObject[];
    const firstUser = messages.findIndex((m) => m.role === 'user');
    return stableJson(messages.slice(0, firstUser === -1 ? 1 : firstUser + 1));
  },

  createAssembler: createChatAssembler,
  assembleJson: assembleChatJson,

  upstreamAuth: (apiKey) => ({ authorization: `Bearer ${apiKey}` }),
  renderError: (error) => ({ status: error.status, body: openAiErrorBody(error) }),
  streamErrorFrame: (error) => `data: ${JSON.stringify(openAiErrorBody(error))}\n\n`,

  toolRequest(model, instructions, userText, tool) {
    return {
      model,
      stream: false,
      messages: [
        { role: 'system', content: instructions },
        { role: 'user', content: userText },
      ],
      tools: [{ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.schema } }],
      tool_choice: { type: 'function', function: { name: tool.name } },
    };
  },
  toolArguments(body, toolName) {
    const message = isObject(body) && Array.isArray(body.choices) && isObject(body.choices[0]) ? body.choices[0].message : undefined;
    const calls = isObject(message) && Array.isArray(message.tool_calls) ? message.tool_calls : [];
    for (const call of calls) {
      const fn = isObject(call) && isObject(call.function) ? call.function : undefined;
      if (fn?.name === toolName && typeof fn.arguments === 'string') return parsedArguments(fn.arguments, toolName);
    }
    throw noToolCall(toolName);
  },
  usage: (body) => tokenUsage(body, { input: 'prompt_tokens', output: 'completion_tokens', cached: ['prompt_tokens_details', 'cached_tokens'] }),
};
