/**
 * Pieces the chat-completions and messages adapters have in common: both carry message
 * content as a string or as an array of typed parts.
 */
import { EngramError } from '../errors.js';
import type { JsonObject, RequestCodec } from './types.js';

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Text of a message's content: a string, or its parts as `partText` words each ('' drops one), a line each. */
export function partsText(content: unknown, partText: (part: JsonObject) => string): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (isObject(part) ? partText(part) : '')).filter(Boolean).join('\n');
}

/** An output format asking for JSON (`json_schema`, `json_object`): a structured answer. */
export function isJsonFormat(format: unknown): boolean {
  return isObject(format) && (format.type === 'json_schema' || format.type === 'json_object');
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

/**
 * Common checks of a message-list body (chat-completions, messages): a model, `stream` a
 * boolean, `messages` an array of messages with one of `roles`; protocol-specific checks
 * follow in each adapter.
 */
export function requireMessages(body: unknown, roles: readonly string[]): asserts body is JsonObject & { messages: unknown[] } {
  if (!isObject(body)) throw new EngramError('invalid_request', 'The request body must be a JSON object');
  if (typeof body.model !== 'string' || body.model.length === 0) {
    throw new EngramError('missing_model', 'you must provide a model parameter', { param: 'model' });
  }
  if (!Array.isArray(body.messages)) throw new EngramError('invalid_request', '`messages` must be an array', { param: 'messages' });
  if (body.stream !== undefined && typeof body.stream !== 'boolean') {
    throw new EngramError('invalid_request', '`stream` must be a boolean', { param: 'stream' });
  }
  body.messages.forEach((message: unknown, index) => {
    if (!isObject(message) || typeof message.role !== 'string' || !roles.includes(message.role)) {
      const param = `messages[${index}].role`;
      throw new EngramError('invalid_request', `\`${param}\` must be one of ${roles.map((r) => `'${r}'`).join(', ')}`, { param });
    }
  });
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

/**
 * Deepest nesting of arrays and objects accepted in a request. Recursive walks over a
 * body (`JSON.stringify` among them) overflow the stack a few thousand levels down; no
 * real request comes near this.
 */
export const MAX_JSON_DEPTH = 256;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/**
 * Whether JSON text nests arrays and objects deeper than `max`, found by one pass over
 * its bytes before anything is parsed (brackets inside strings do not count). Works on
 * any text: invalid JSON is left for the parser to report.
 */
export function jsonDeeperThan(json: Uint8Array | string, max: number): boolean {
  const bytes = typeof json === 'string' ? Buffer.from(json, 'utf8') : Buffer.from(json.buffer, json.byteOffset, json.byteLength);
  let depth = 0;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (byte === QUOTE) {
      i = stringEnd(bytes, i);
    } else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) {
      depth--;
    }
  }
  return false;
}

/** The index of the quote closing the string opened at `open` (the end of the text when none). */
function stringEnd(bytes: Buffer, open: number): number {
  let at = open;
  for (;;) {
    // Strings are most of a request's bytes: jump from quote to quote.
    at = bytes.indexOf(QUOTE, at + 1);
    if (at === -1) return bytes.length;
    let backslashes = 0;
    while (bytes[at - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
}

/** Whether a parsed value nests arrays and objects deeper than `max` (walked without recursion). */
export function valueDeeperThan(value: unknown, max: number): boolean {
  const pending: Array<[unknown, number]> = [[value, 0]];
  while (pending.length > 0) {
    const [item, depth] = pending.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    if (depth + 1 > max) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      if (typeof child === 'object' && child !== null) pending.push([child, depth + 1]);
    }
  }
  return false;
}

/** The 400 for a request nested deeper than `MAX_JSON_DEPTH`. */
export function tooDeep(): EngramError {
  return new EngramError('invalid_request', `The JSON is nested deeper than ${MAX_JSON_DEPTH} levels`);
}

/**
 * JSON text with `cache_control` markers left out: clients move them between turns. A
 * value nested deeper than `MAX_JSON_DEPTH` is refused (400) rather than overflowing the stack.
 */
export function stableJson(value: unknown): string {
  if (valueDeeperThan(value, MAX_JSON_DEPTH)) throw tooDeep();
  return JSON.stringify(value, (key, inner) => (key === 'cache_control' ? undefined : inner));
}

export function parseJsonOr<T>(text: string, fallback: T): unknown | T {
  try {
    return JSON.parse(text);
  } catch {
    return fallback;
  }
}

/** Past this, tool-call arguments (a file written whole) stay text: their readers look at the start only. */
const MAX_PARSED_ARGUMENTS = 64 * 1024;

/**
 * A tool call's input from its arguments as sent: JSON text (chat completions, Responses)
 * parsed, an object (messages) as it is; text that is too long or not JSON stays text.
 */
export function toolInput(args: unknown): unknown {
  if (typeof args !== 'string') return args;
  return args.length > MAX_PARSED_ARGUMENTS ? args : parseJsonOr(args, args);
}

/**
 * What both message-list protocols (chat completions, messages) share: a `model`, a
 * `stream` flag, and a `messages` array whose entries carry their text in `content`.
 */
export const messageListBasics = {
  messagesField: 'messages',
  model: (body: JsonObject) => body.model as string,
  messages: (body: JsonObject) => body.messages as unknown[],
  withMessages: (body: JsonObject, messages: unknown[]) => ({ ...body, messages }),
  appendText: (message: unknown, text: string) => ({ ...(message as JsonObject), content: appendToContent((message as JsonObject).content, text) }),
} satisfies Partial<RequestCodec>;
