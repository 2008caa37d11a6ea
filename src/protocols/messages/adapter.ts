/**
 * Anthropic Messages (`POST /v1/messages`), as spoken by the Anthropic SDKs and Claude
 * Code (which also sends `role: "system"` entries mid-conversation and wraps client
 * context in `<system-reminder>` text blocks).
 */
import { EngramError, anthropicErrorBody } from '../../errors.js';
import type { Turn } from '../../domain/transcript.js';
import { isClientContext, isJsonFormat, isObject, looksLikeFailure, messageListBasics, renderToolCall, requireMessages, stableJson } from '../shared.js';
import type { JsonObject, ProtocolAdapter } from '../types.js';
import { tokenUsage } from '../usage.js';
import { noToolCall } from '../forced-tool.js';
import { assembleMessagesJson, createMessagesAssembler } from './assembler.js';

const ROLES = ['user', 'assistant', 'system'] as const;
export const DEFAULT_ANTHROPIC_VERSION = '2023-06-01';

function blocksOf(content: unknown): JsonObject[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? content.filter(isObject) : [];
}

/** The text of a content's text blocks (a string is one), uncopied. */
function textsOf(content: unknown): string[] {
  return blocksOf(content).flatMap((block) => (block.type === 'text' && typeof block.text === 'string' ? [block.text] : []));
}

/** What the user typed: text blocks that are not client-side context. */
function typedText(content: unknown): string {
  return textsOf(content).filter((text) => !isClientContext(text)).join('\n');
}

function blockText(block: JsonObject): string {
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' && !isClientContext(block.text) ? block.text : '';
    case 'image':
      return '[image]';
    case 'document':
      return '[document]';
    case 'tool_use':
    case 'server_tool_use':
      return renderToolCall(String(block.name ?? ''), block.input);
    case 'tool_result':
      return typeof block.content === 'string' ? block.content : blocksOf(block.content).map(blockText).filter(Boolean).join('\n');
    default:
      // thinking and redacted_thinking never reach extraction
      return '';
  }
}

/** The client-side tool calls of an assistant message (server tools run at the provider). */
function toolUses(message: unknown): Array<JsonObject & { name: string }> {
  if (!isObject(message) || message.role !== 'assistant') return [];
  return blocksOf(message.content).filter((block): block is JsonObject & { name: string } => block.type === 'tool_use' && typeof block.name === 'string');
}

/** The turns of one Messages API message: tool results, then what the user typed; thinking never. */
export function messageTurns(message: JsonObject): Turn[] {
  if (message.role === 'system') return [];
  const blocks = blocksOf(message.content);
  if (message.role === 'assistant') {
    return [{ role: 'assistant', text: blocks.map(blockText).filter(Boolean).join('\n') }];
  }
  const results = blocks.filter((block) => block.type === 'tool_result');
  const others = blocks.filter((block) => block.type !== 'tool_result');
  return [
    ...results.map((block): Turn => ({ role: 'tool', text: blockText(block) })),
    { role: 'user', text: others.map(blockText).filter(Boolean).join('\n') },
  ];
}

/**
 * Claude Code with tool search on (its default) does not put MCP tools in `tools` until
 * the model loads them: it lists their names, one a line, in a system entry ("The
 * following deferred tools are now available via ToolSearch ..."). MCP tools are the
 * `mcp__server__tool` lines of such a list.
 */
function deferredTools(body: JsonObject, loaded: ReadonlySet<string>): Array<{ name: string; description: string; deferred: true }> {
  const texts = [
    ...blocksOf(body.system),
    ...(body.messages as unknown[]).filter((m): m is JsonObject => isObject(m) && m.role === 'system').flatMap((m) => blocksOf(m.content)),
  ].flatMap((block) => (block.type === 'text' && typeof block.text === 'string' && block.text.includes('deferred tools') ? [block.text] : []));
  const names = new Set(texts.flatMap((text) => text.match(/^mcp__[\w.-]+__[\w.-]+$/gm) ?? []));
  return [...names].filter((name) => !loaded.has(name)).map((name) => ({ name, description: '', deferred: true }));
}

export const messages: ProtocolAdapter = {
  id: 'messages',
  ...messageListBasics,
  upstreamPath: '/v1/messages',

  validate(body: unknown): asserts body is JsonObject {
    requireMessages(body, ROLES);
    if (body.max_tokens !== undefined && typeof body.max_tokens !== 'number') {
      throw new EngramError('invalid_request', 'max_tokens: Input should be a valid integer', { param: 'max_tokens' });
    }
  },
  isSystemEntry: (message) => isObject(message) && message.role === 'system',
  isUserInput(message) {
    if (!isObject(message) || message.role !== 'user') return false;
    const blocks = blocksOf(message.content);
    return !blocks.some((block) => block.type === 'tool_result') && typedText(message.content).trim().length > 0;
  },
  isToolResult: (message) => isObject(message) && message.role === 'user' && blocksOf(message.content).some((block) => block.type === 'tool_result'),
  toolResultFailed(message) {
    if (!isObject(message) || message.role !== 'user') return false;
    return blocksOf(message.content).some(
      (block) => block.type === 'tool_result' && (block.is_error === true || looksLikeFailure(blockText(block))),
    );
  },
  calledTools: (message) => toolUses(message).map((block) => ({ name: block.name })),
  toolCalls: (message) => toolUses(message).map((block) => ({ name: block.name, input: block.input })),
  toolOutputs(message) {
    if (!isObject(message) || message.role !== 'user') return [];
    return blocksOf(message.content).flatMap((block) => (block.type === 'tool_result' ? textsOf(block.content) : []));
  },
  structuredAnswer: (body) => isJsonFormat(isObject(body.output_config) ? body.output_config.format : undefined) || isJsonFormat(body.output_format),
  offeredTools(body) {
    const tools = Array.isArray(body.tools) ? body.tools.filter(isObject) : [];
    const loaded = tools.flatMap((tool) =>
      typeof tool.name === 'string' ? [{ name: tool.name, description: typeof tool.description === 'string' ? tool.description : '' }] : [],
    );
    return [...loaded, ...deferredTools(body, new Set(loaded.map((tool) => tool.name)))];
  },
  queryText: (message) => (isObject(message) ? typedText(message.content) : ''),

  transcript(body) {
    return (body.messages as JsonObject[]).flatMap(messageTurns).filter((turn) => turn.text.length > 0);
  },
  instructions(body, isInstructionFile) {
    const list = (body.messages as unknown[]).filter(isObject);
    return [
      ...list.filter((m) => m.role === 'user').flatMap((m) => textsOf(m.content).filter(isInstructionFile)),
      ...list.filter((m) => m.role === 'system').flatMap((m) => textsOf(m.content)),
      ...textsOf(body.system),
    ];
  },
  systemPrompt: (body) => body.system,
  conversationSeed(body) {
    const list = body.messages as JsonObject[];
    return stableJson([body.system ?? null, list.find((m) => m.role === 'user') ?? null]);
  },

  createAssembler: createMessagesAssembler,
  assembleJson: assembleMessagesJson,

  upstreamAuth: (apiKey) => ({ 'x-api-key': apiKey, 'anthropic-version': DEFAULT_ANTHROPIC_VERSION }),
  renderError: (error) => ({ status: error.status, body: anthropicErrorBody(error) }),
  streamErrorFrame: (error) => `event: error\ndata: ${JSON.stringify(anthropicErrorBody(error))}\n\n`,

  toolRequest(model, instructions, userText, tool) {
    return {
      model,
      max_tokens: 4096,
      stream: false,
      system: cachedPrefix(instructions),
      messages: [{ role: 'user', content: userText }],
      tools: [{ name: tool.name, description: tool.description, input_schema: tool.schema }],
      tool_choice: { type: 'tool', name: tool.name },
    };
  },
  toolArguments(body, toolName) {
    const content = isObject(body) && Array.isArray(body.content) ? body.content : [];
    // The input arrives parsed: a `tool_use` block carries an object.
    const call = content.find((block) => isObject(block) && block.type === 'tool_use' && block.name === toolName);
    if (!isObject(call)) throw noToolCall(toolName);
    return call.input;
  },
  usage: (body) => tokenUsage(body, { input: 'input_tokens', output: 'output_tokens', cached: ['cache_read_input_tokens'], added: ['cache_read_input_tokens', 'cache_creation_input_tokens'] }),
};

/**
 * The system prompt of Engram's own calls (extraction, tagging) marked for Anthropic's
 * prompt cache: with the tool before it, the fixed part of every such call, byte for byte
 * the same, so a call within minutes of another reads it from the cache (at a tenth of the
 * price) instead of paying for it again.
 */
function cachedPrefix(instructions: string): JsonObject[] {
  return [{ type: 'text', text: instructions, cache_control: { type: 'ephemeral' } }];
}
