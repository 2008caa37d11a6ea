import { createHash } from 'node:crypto';
import type { Answer, ExtractedReflection, Reply, TaggedReflection, TaggingLine } from './types.js';

/** Fixed so identical answers are byte-identical across runs. */
export const CREATED = 1_700_000_000;

/** A short, counter-free id: the same inputs always give the same id. */
export function hashId(...parts: string[]): string {
  return createHash('sha1').update(parts.join('\u0000')).digest('hex').slice(0, 24);
}

/** Token estimate used for usage numbers: one token per four characters, at least one. */
export function tokensFor(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4));
}

/**
 * Sum of the lengths of every string in a JSON value. Usage derived from it does not
 * change when a proxy re-serialises the body (whitespace, key order).
 */
export function stringLength(value: unknown): number {
  if (typeof value === 'string') return value.length;
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + stringLength(v), 0);
  if (value !== null && typeof value === 'object') {
    return Object.values(value).reduce((n: number, v) => n + stringLength(v), 0);
  }
  return 0;
}

/** Output token count of an answer, from the lengths of what it generates. */
export function outputTokens(answer: Answer, thinking = ''): number {
  const text = answer.text ?? '';
  const args = answer.type === 'tool_call' ? JSON.stringify(answer.arguments) + answer.name : '';
  return tokensFor(text.length + args.length + thinking.length);
}

/**
 * Splits text into a few deltas at word boundaries (whitespace stays with the word
 * before it), like a provider streaming tokens. Falls back to code points for a
 * single long word, so any text of two or more characters gives at least two deltas.
 */
export function textDeltas(text: string, maxParts = 4): string[] {
  const words = text.split(/(?<=\s)/).filter((w) => w.length > 0);
  if (words.length < 2) return fragments(text, maxParts);
  const parts = Math.min(maxParts, words.length);
  const size = Math.ceil(words.length / parts);
  const out: string[] = [];
  for (let i = 0; i < words.length; i += size) out.push(words.slice(i, i + size).join(''));
  return out;
}

/** Splits a string into up to `parts` pieces of code points (never splitting a surrogate pair). */
export function fragments(text: string, parts: number): string[] {
  const chars = Array.from(text);
  if (chars.length === 0) return [];
  const n = Math.min(parts, chars.length);
  const size = Math.ceil(chars.length / n);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}

/** Text of a message content: a string, or the `text` of its text parts/blocks. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((part): part is { type: string; text: string } =>
      part !== null && typeof part === 'object' && part.type === 'text' && typeof part.text === 'string')
    .map((part) => part.text)
    .join('\n');
}

/**
 * The default extractor's rule: `REMEMBER: x` lines become factual reflections,
 * `AVOID: x` lines procedural ones, each with the default tagger's tags (a real model
 * tags what it extracts, so nothing it learns waits for the tagging job). `REMEMBER
 * EVERYWHERE: x` is a factual reflection marked as holding in every project.
 */
export function defaultExtraction(transcript: string): ExtractedReflection[] {
  const out: ExtractedReflection[] = [];
  const add = (kind: ExtractedReflection['kind'], content: string, everywhere = false) => {
    const [{ tags }] = defaultTags([{ id: '', kind, content }]);
    out.push({ kind, content, topic: 'notes', tags, ...(everywhere ? { everywhere } : {}) });
  };
  for (const line of transcript.split('\n')) {
    const everywhere = line.indexOf('REMEMBER EVERYWHERE:');
    if (everywhere >= 0) {
      add('factual', line.slice(everywhere + 'REMEMBER EVERYWHERE:'.length).trim(), true);
      continue;
    }
    const remember = line.indexOf('REMEMBER:');
    if (remember >= 0) {
      add('factual', line.slice(remember + 'REMEMBER:'.length).trim());
      continue;
    }
    const avoid = line.indexOf('AVOID:');
    if (avoid >= 0) add('procedural', line.slice(avoid + 'AVOID:'.length).trim());
  }
  return out;
}

/** The `[id] (kind) content` lines of a tagging request's user text (Engram's `<reflections>` block). */
export function taggingLines(text: string): TaggingLine[] {
  return [...text.matchAll(/^\[([^\]\s]+)\] \(([a-z]+)\) (.*)$/gm)].map(([, id, kind, content]) => ({ id, kind, content }));
}

const SHORT_WORDS = new Set(['with', 'from', 'that', 'this', 'into', 'when', 'then', 'than', 'they', 'them', 'have', 'does', 'were', 'will']);

/**
 * The default tagger's rule: for each line, up to three tags made of its own longer words
 * (the first two, the next two, the last one). Deterministic; adds no word the line does
 * not say, so it changes what a search finds only where a test scripts its own tags.
 */
export function defaultTags(lines: readonly TaggingLine[]): TaggedReflection[] {
  return lines.map(({ id, content }) => {
    const words = content.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((word) => word.length >= 4 && !SHORT_WORDS.has(word));
    const tags = [words.slice(0, 2).join(' '), words.slice(2, 4).join(' '), words.at(-1) ?? ''];
    return { id, tags: [...new Set(tags.filter((tag) => tag !== ''))] };
  });
}

export function isReply(value: unknown): value is Reply {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && typeof (value as Reply).type === 'string';
}

/** Anthropic's error type for a status. */
export function anthropicErrorType(status: number): string {
  switch (status) {
    case 400: return 'invalid_request_error';
    case 401: return 'authentication_error';
    case 402: return 'billing_error';
    case 403: return 'permission_error';
    case 404: return 'not_found_error';
    case 413: return 'request_too_large';
    case 429: return 'rate_limit_error';
    case 504: return 'timeout_error';
    case 529: return 'overloaded_error';
    default: return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

/** OpenAI's error type and code for a status, as the real API sends them. */
export function openaiErrorType(status: number): { type: string; code: string | null } {
  switch (status) {
    case 401: return { type: 'invalid_request_error', code: 'invalid_api_key' };
    case 404: return { type: 'invalid_request_error', code: 'model_not_found' };
    case 429: return { type: 'requests', code: 'rate_limit_exceeded' };
    default: return status >= 500 ? { type: 'server_error', code: null } : { type: 'invalid_request_error', code: null };
  }
}
