/**
 * Pieces the chat-completions and messages adapters have in common: both carry message
 * content as a string or as an array of typed parts.
 */
import { EngramError } from '../errors.js';
import type { JsonObject, ProtocolAdapter } from './types.js';

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Claude Code and others wrap client-side context in these; it is not what the user typed. */
const CLIENT_CONTEXT = /^\s*<system-reminder>/;

export function isClientContext(text: string): boolean {
  return CLIENT_CONTEXT.test(text);
}

/**
 * Appends `text` to a message's content. A string stays a string (joined by a blank
 * line) so upstreams that only accept string content keep working; an array gets a new
 * text part at its end.
 */
export function appendToContent(content: unknown, text: string): unknown {
  if (typeof content === 'string') return content.length > 0 ? `${content}\n\n${text}` : text;
  if (Array.isArray(content)) return [...content, { type: 'text', text }];
  return text;
}

/** Common checks of a request body; protocol-specific checks follow in each adapter. */
export function requireBasics(body: unknown, messagesField: string): asserts body is JsonObject {
  if (!isObject(body)) throw new EngramError('invalid_request', 'The request body must be a JSON object');
  if (typeof body.model !== 'string' || body.model.length === 0) {
    throw new EngramError('missing_model', 'you must provide a model parameter', { param: 'model' });
  }
  if (!Array.isArray(body[messagesField])) {
    throw new EngramError('invalid_request', `\`${messagesField}\` must be an array`, { param: messagesField });
  }
  if (body.stream !== undefined && typeof body.stream !== 'boolean') {
    throw new EngramError('invalid_request', '`stream` must be a boolean', { param: 'stream' });
  }
}

export function checkMessage(message: unknown, index: number, field: string, roles: readonly string[]): void {
  if (!isObject(message) || typeof message.role !== 'string' || !roles.includes(message.role)) {
    throw new EngramError(
      'invalid_request',
      `\`${field}[${index}].role\` must be one of ${roles.map((r) => `'${r}'`).join(', ')}`,
      { param: `${field}[${index}].role` },
    );
  }
}

/**
 * Whether a tool's output reports a failure, by its first lines: an error or exception
 * line, a traceback, a non-zero exit code (Codex: `Process exited with code 1`), a missing command or
 * file. Only the start is read: a long output that mentions "error" deep inside (a log
 * being searched) does not count.
 */
export function looksLikeFailure(text: string): boolean {
  const head = text.slice(0, 1500);
  return (
    /^\s*(?:error|fatal|exception|panic|traceback)\b/im.test(head) ||
    /\b(?:exit(?:ed)?(?: with)? (?:code|status)|exit_code)\W{0,3}[1-9]/i.test(head) ||
    /\b(?:command not found|no such file or directory|permission denied)\b/i.test(head) ||
    /^\s*\w*(?:Error|Exception):/m.test(head)
  );
}

/** Tool arguments shown to extraction: enough to see what was done, never a whole file. */
export function renderToolCall(name: string, args: unknown): string {
  const text = typeof args === 'string' ? args : JSON.stringify(args ?? {});
  return `[tool call ${name} ${text.length > 600 ? `${text.slice(0, 600)}…` : text}]`;
}

/** JSON text with `cache_control` markers left out: clients move them between turns. */
export function stableJson(value: unknown): string {
  return JSON.stringify(value, (key, inner) => (key === 'cache_control' ? undefined : inner));
}

export function parseJsonOr<T>(text: string, fallback: T): unknown | T {
  try {
    return JSON.parse(text);
  } catch {
    return fallback;
  }
}

/**
 * What both message-list protocols (chat completions, messages) share: a `model`, a
 * `stream` flag, and a `messages` array whose entries carry their text in `content`.
 */
export const messageListBasics = {
  messagesField: 'messages',
  model: (body: JsonObject) => body.model as string,
  isStream: (body: JsonObject) => body.stream === true,
  messages: (body: JsonObject) => body.messages as unknown[],
  withMessages: (body: JsonObject, messages: unknown[]) => ({ ...body, messages }),
  appendText: (message: unknown, text: string) => ({ ...(message as JsonObject), content: appendToContent((message as JsonObject).content, text) }),
} satisfies Partial<ProtocolAdapter>;

/**
 * Copilot CLI sends no session header, but its system prompt names the session's folder
 * (`Session folder: ~/.copilot/session-state/<id>`), the id its `events.jsonl` carries:
 * with it, an uploaded Copilot transcript is known as a session the proxy saw.
 */
const COPILOT_SESSION = /\.copilot\/session-state\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/;

export function copilotSessionId(system: unknown): string | undefined {
  const text = typeof system === 'string' ? system : Array.isArray(system) ? system.map((part) => (isObject(part) && typeof part.text === 'string' ? part.text : '')).join('\n') : '';
  return COPILOT_SESSION.exec(text)?.[1];
}
