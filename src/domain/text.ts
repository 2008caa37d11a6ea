/** Small pure text helpers shared by memory code (token estimates, normalisation, truncation). */

/** Rough token count used for budgets: about four characters per token for English and code. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Collapses every run of whitespace (newlines included) into one space and trims. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * The form two texts share when they say the same thing: Unicode-compatibility folded,
 * lowercased, whitespace collapsed, trailing sentence punctuation dropped. Used for
 * content-derived ids, so it must never change for an existing text.
 */
export function normaliseText(text: string): string {
  return oneLine(text.normalize('NFKC').toLowerCase()).replace(/[\s.!;,]+$/u, '');
}

/**
 * Cuts `text` to at most `max` characters at a word boundary when one is near, ending with
 * an ellipsis. Never splits a surrogate pair.
 */
export function truncateEnd(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 1) return text.slice(0, Math.max(0, max));
  let cut = safeCut(text, max - 1);
  const space = text.lastIndexOf(' ', cut);
  // Prefer a word boundary unless that would lose more than a fifth of the room.
  if (space > cut * 0.8) cut = space;
  return text.slice(0, cut).trimEnd() + '…';
}

/**
 * Keeps the head and the tail of `text` within `max` characters, replacing the middle with a
 * marker saying how much was left out. Long tool outputs keep their command and their
 * result this way.
 */
export function truncateMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const marker = (omitted: number) => `\n[… ${omitted} characters omitted …]\n`;
  const room = Math.max(0, max - marker(text.length).length);
  const head = safeCut(text, Math.ceil(room / 2));
  const tailStart = safeCut(text, text.length - Math.floor(room / 2));
  return text.slice(0, head) + marker(tailStart - head) + text.slice(tailStart);
}

/** The last `max` characters of `text`, not starting inside a surrogate pair. */
export function tail(text: string, max: number): string {
  if (text.length <= max) return text;
  return text.slice(safeCut(text, text.length - max));
}

/**
 * Lines a person pastes around a question that say nothing of what they ask: stack
 * frames (JavaScript, Java, Python, Go, Rust), and lines without a single word of three
 * letters (hex dumps, separators, numbers). They would drown the question in a search.
 */
const NOISE_LINE = [
  /^\s*at\s+\S.*(?:\(.*:\d+(?::\d+)?\)|:\d+:\d+)\s*$/, // JavaScript, Java
  /^\s*File ".*", line \d+/, // Python
  /^\s*\S+\.go:\d+/, // Go
  /^\s*\d+:\s+0x[0-9a-f]+/i, // native frames, Rust backtraces
  /^\s*(?:\d+\s*)?\|/, // a compiler's source excerpt
];

/** `text` without the lines that look like pasted noise; the text itself when every line does. */
export function withoutNoiseLines(text: string): string {
  const lines = text.split('\n');
  const kept = lines.filter((line) => !NOISE_LINE.some((pattern) => pattern.test(line)) && /\p{L}{3}/u.test(line));
  return kept.length === 0 || kept.length === lines.length ? text : kept.join('\n');
}

/**
 * The first `head` and the last `tailLength` characters of `text`, for a long text whose
 * start and end both matter (a question, a pasted log, the question again). Each cut moves
 * to whitespace within a few characters, so no half word is left, and never falls inside
 * a surrogate pair. A text that fits in both comes back whole, as `tail`.
 */
export function headAndTail(text: string, head: number, tailLength: number): { head: string; tail: string } {
  if (text.length <= head + tailLength) return { head: '', tail: text };
  let headEnd = safeCut(text, head);
  const space = lastSpace(text, headEnd, WORD_SLACK);
  if (space !== -1) headEnd = space;
  let tailStart = safeCut(text, text.length - tailLength);
  const next = firstSpace(text, tailStart - 1, WORD_SLACK);
  if (next !== -1) tailStart = next + 1;
  return { head: text.slice(0, headEnd), tail: text.slice(tailStart) };
}

/** How far a cut may move to reach whitespace. */
const WORD_SLACK = 24;

/** The index of the last whitespace in `text[at - within, at]`, or -1. */
function lastSpace(text: string, at: number, within: number): number {
  for (let i = at; i >= Math.max(0, at - within); i--) if (isSpace(text.charCodeAt(i))) return i;
  return -1;
}

/** The index of the first whitespace in `text[at, at + within]`, or -1. */
function firstSpace(text: string, at: number, within: number): number {
  for (let i = Math.max(0, at); i <= Math.min(text.length - 1, at + within); i++) if (isSpace(text.charCodeAt(i))) return i;
  return -1;
}

const isSpace = (c: number) => c === 0x20 || (c >= 0x09 && c <= 0x0d);

/** Moves a cut position off the low half of a surrogate pair. */
function safeCut(text: string, index: number): number {
  const code = text.charCodeAt(index);
  return code >= 0xdc00 && code <= 0xdfff ? index - 1 : index;
}

/**
 * Function words that carry no topic: left out of embeddings and keyword queries, so
 * "where is the deploy script?" matches on `deploy` and `script` only.
 */
export const STOPWORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again all also am an and any are as at be because been before being ' +
    'below between both but by can could did do does doing done down during each either else ' +
    'ever every few for from further get gets got had has have having he her here hers herself ' +
    'him himself his how i if in into is it its itself just let me might more most much must my ' +
    'myself no nor not now of off on once only or other our ours ourselves out over own please ' +
    'same shall she should so some such than that the their theirs them themselves then there ' +
    'these they this those through to too under until up upon us very via was we were what when ' +
    'where whether which while who whom whose why will with within without would yes yet you ' +
    'your yours yourself yourselves'
  ).split(' '),
);

/**
 * Up to `max` distinct content words of `text` (lowercased, stopwords and one-character
 * words left out), the latest first (or the earliest, for the opening of a text): the
 * free-text query handed to keyword search.
 */
export function keywordQuery(text: string, max = 32, first: 'latest' | 'earliest' = 'latest'): string {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  if (first === 'latest') words.reverse();
  const seen = new Set<string>();
  for (let i = 0; i < words.length && seen.size < max; i++) {
    const word = words[i];
    if (word.length > 1 && !STOPWORDS.has(word)) seen.add(word);
  }
  return [...seen].join(' ');
}

/** The words of a text, lower case, diacritics removed, in order, with repeats. */
export function words(text: string): string[] {
  const lower = text.toLowerCase();
  // Most text is ASCII: skip Unicode normalisation (the costly part) when it is.
  if (!/[^\x00-\x7f]/.test(lower)) return lower.match(/[a-z0-9]+/g) ?? [];
  const plain = lower.normalize('NFKD').replace(/\p{M}+/gu, '');
  return plain.match(/[\p{L}\p{N}]+/gu) ?? [];
}
