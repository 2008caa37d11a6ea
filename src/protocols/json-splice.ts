/**
 * Edits of a JSON request body that leave every other byte as the client sent it: the
 * elements of one top-level array are located in the raw bytes, and only the elements
 * Engram changed are re-serialised. Cheaper than re-serialising a 400 KB body, and the
 * client's system prompt and tools stay byte-identical, not just equal.
 *
 * Scans bytes: JSON's structural characters are ASCII, and no byte of a multi-byte
 * UTF-8 sequence is below 0x80, so they cannot be mistaken for one.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

function isSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

function skipSpace(json: Uint8Array, at: number): number {
  while (at < json.length && isSpace(json[at])) at++;
  return at;
}

/** Index just past the string that starts at `at` (a quote); -1 when it never ends. */
function skipString(json: Uint8Array, at: number): number {
  // Jumps from quote to quote natively; a quote preceded by an odd run of backslashes is escaped.
  for (let quote = json.indexOf(QUOTE, at + 1); quote !== -1; quote = json.indexOf(QUOTE, quote + 1)) {
    let slashes = 0;
    while (json[quote - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return quote + 1;
  }
  return -1;
}

/** Index just past the value that starts at `at`; -1 when the text ends first. */
function skipValue(json: Uint8Array, at: number): number {
  const first = json[at];
  if (first === QUOTE) return skipString(json, at);
  if (first === OPEN_OBJECT || first === OPEN_ARRAY) {
    let depth = 0;
    for (let i = at; i < json.length; i++) {
      const byte = json[i];
      if (byte === QUOTE) {
        i = skipString(json, i) - 1;
        if (i < 0) return -1;
      } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) depth++;
      else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
        if (--depth === 0) return i + 1;
      }
    }
    return -1;
  }
  let i = at;
  while (i < json.length && json[i] !== COMMA && json[i] !== CLOSE_OBJECT && json[i] !== CLOSE_ARRAY && !isSpace(json[i])) i++;
  return i;
}

/** [start, end) of each element of an array that starts at `at`, and the index just past the array. */
function elementSpans(json: Uint8Array, at: number): { spans: Array<[number, number]>; end: number } | undefined {
  const spans: Array<[number, number]> = [];
  let i = skipSpace(json, at + 1);
  if (json[i] === CLOSE_ARRAY) return { spans, end: i + 1 };
  for (;;) {
    const end = skipValue(json, i);
    if (end < 0) return undefined;
    spans.push([i, end]);
    i = skipSpace(json, end);
    if (json[i] === CLOSE_ARRAY) return { spans, end: i + 1 };
    if (json[i] !== COMMA) return undefined;
    i = skipSpace(json, i + 1);
  }
}

/**
 * Byte spans of the elements of the array held by top-level member `field` of a JSON
 * object (the last such member, as `JSON.parse` keeps), or undefined when the text is not
 * shaped so.
 */
export function arrayElementSpans(json: Uint8Array, field: string): Array<[number, number]> | undefined {
  let i = skipSpace(json, 0);
  if (json[i] !== OPEN_OBJECT) return undefined;
  i = skipSpace(json, i + 1);
  let found: Array<[number, number]> | undefined;
  while (json[i] === QUOTE) {
    const keyEnd = skipString(json, i);
    if (keyEnd < 0) return undefined;
    const key = JSON.parse(Buffer.from(json.buffer, json.byteOffset + i, keyEnd - i).toString('utf8')) as string;
    i = skipSpace(json, keyEnd);
    if (json[i] !== COLON) return undefined;
    i = skipSpace(json, i + 1);
    // The array itself is scanned once, element by element (a 400 KB history is most of the body).
    const elements = key === field && json[i] === OPEN_ARRAY ? elementSpans(json, i) : undefined;
    const valueEnd = elements ? elements.end : skipValue(json, i);
    if (valueEnd < 0) return undefined;
    if (key === field) found = elements?.spans;
    i = skipSpace(json, valueEnd);
    if (json[i] === CLOSE_OBJECT) return found;
    if (json[i] !== COMMA) return undefined;
    i = skipSpace(json, i + 1);
  }
  return undefined;
}

/**
 * `raw` with the elements at the given indexes of array `field` replaced by the JSON of
 * the given values; undefined when the array cannot be located or has another length.
 */
export function spliceArrayElements(
  raw: Buffer,
  field: string,
  length: number,
  replacements: ReadonlyMap<number, unknown>,
): Buffer | undefined {
  const spans = arrayElementSpans(raw, field);
  if (!spans || spans.length !== length) return undefined;
  const parts: Buffer[] = [];
  let copied = 0;
  for (const index of [...replacements.keys()].sort((a, b) => a - b)) {
    const span = spans[index];
    if (!span) return undefined;
    parts.push(raw.subarray(copied, span[0]), Buffer.from(JSON.stringify(replacements.get(index))));
    copied = span[1];
  }
  parts.push(raw.subarray(copied));
  return Buffer.concat(parts);
}
