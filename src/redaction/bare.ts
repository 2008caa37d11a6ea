/**
 * The secret shapes redacted with no name, prefix or command beside them, because agents
 * paste them bare ("use wJalrX…", a key alone on a line) and nothing else would catch them.
 * All are found by probing: a run of N characters covers two consecutive multiples of N/2,
 * so only those indexes are looked at before a run is measured.
 *
 * - A 64-digit hex run (a 256-bit key), unless the line says it is a hash (`sha256`,
 *   `digest`, `commit`…) or it starts a line of `sha256sum` output. Git's SHA-1 has 40 digits.
 * - A 40-character base64 run that looks generated (an AWS secret access key): both cases,
 *   a digit, 4 bits a character (a random one averages 4.8), not words, not the base64 of
 *   text. Exactly 40: base64 blobs and paths run longer or break at `.` and `-`.
 * - A PEM body's line pasted without its BEGIN and END: 60 to 76 base64 characters alone on
 *   their line, 4.5 bits a character (random lines of 64 average 5.2, a PKCS#8 key's first
 *   line has 4.7), with the body's short last line. Alone, because the same run inside a
 *   line is a public key or a signature in a JSON value as often as not.
 * - A token of the shape most vendors use and no rule names: a lower-case prefix of one or
 *   two parts, each ended by `_` or `-` (`acme_live_`, `xyz-`), then 30 or more letters and
 *   digits that look generated. Identifiers, UUIDs, hashes, package names and paths fail.
 */
import { entropy, readsAsWords, wordShare } from './entropy.js';
import type { Finder, Finding } from './rule.js';

/** Character classes as tables: these loops look at most characters of every text. */
const classTable = (chars: string): Uint8Array => {
  const table = new Uint8Array(128);
  for (let i = 0; i < chars.length; i++) table[chars.charCodeAt(i)] = 1;
  return table;
};
const HEX_CHARS = classTable('0123456789abcdefABCDEF');
const BASE64_CHARS = classTable('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/');
const ALNUM_CHARS = classTable('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789');

/** Words shortly before a hex run that make it a hash. */
const HASH_CONTEXT =
  /sha-?(?:1|224|256|384|512)|sha\d*sum|digest|checksum|hash|hmac|encrypt|cipher|commit|integrity|fingerprint|signature|version|blob|tree|object|revision|\brev\b|etag|merkle|cid\b/i;
/** The name right before a value ends in `id`: `device_id": "`, `requestId=`, `ID: `. */
const ID_LABEL = /(?:^|[^A-Za-z])(?:[A-Za-z0-9]*[_-])?(?:id|ID)["'\\]*\s*[:=]\s*["'\\]*$|[a-z]Id["'\\]*\s*[:=]\s*["'\\]*$/;
/**
 * How far back a hash's label may be: on its line, or on the three before (the command,
 * or the code, that printed it: `console.log(hash.digest('hex'))`, `// Prints:`).
 */
const HASH_CONTEXT_LINES = 3;
const HASH_CONTEXT_CHARS = 240;

/**
 * Maximal runs of `chars` at least `length` long, found by probing every `length / 2`
 * characters (such a run holds two consecutive probes); `probes`, narrower, says which
 * probes can be in a run worth measuring.
 */
function runs(text: string, length: number, chars: Uint8Array, probes = chars): Array<[number, number]> {
  const half = length / 2;
  const out: Array<[number, number]> = [];
  const has = (table: Uint8Array, i: number) => {
    const c = text.charCodeAt(i);
    return c < 128 && table[c] === 1;
  };
  let last = 0;
  for (let probe = half; probe < text.length; probe += half) {
    if (probe < last || !has(probes, probe)) continue;
    // The run holds the stretch to the next probe or to the previous one: prose and code
    // fail this within a word's length.
    let ahead = probe + half <= text.length;
    for (let i = probe + 1; ahead && i < probe + half; i++) ahead = has(probes, i);
    let behind = !ahead;
    for (let i = probe - 1; behind && i >= probe - half; i--) behind = has(probes, i);
    if (!ahead && !behind) continue;
    let start = probe;
    while (start > 0 && has(chars, start - 1)) start--;
    let end = probe + 1;
    while (end < text.length && has(chars, end)) end++;
    last = end;
    if (end - start >= length) out.push([start, end]);
  }
  return out;
}

export const bareHexFinder: Finder = {
  name: 'bare_hex',
  find(text) {
    const found: Finding[] = [];
    for (const [from, end] of runs(text, 64, BASE64_CHARS, HEX_CHARS)) {
      const start = text.startsWith('0x', from) ? from + 2 : from;
      const run = text.slice(start, end);
      if (end - start < 64 || end - start > 128 || !/^[0-9a-f]+$|^[0-9A-F]+$/.test(run) || entropy(run) < 3) continue;
      const lineStart = text.lastIndexOf('\n', start - 1) + 1;
      let contextStart = lineStart;
      for (let n = 0; n < HASH_CONTEXT_LINES && contextStart > 0; n++) contextStart = text.lastIndexOf('\n', contextStart - 2) + 1;
      if (HASH_CONTEXT.test(text.slice(Math.max(contextStart, start - HASH_CONTEXT_CHARS), start))) continue;
      // The value of an id (`"device_id": "…"`, `requestId=…`) identifies, it does not unlock;
      // an element of a JSON list of them (`"tail": ["…", "…"]`) is a list of hashes.
      const before = text.slice(Math.max(lineStart, start - 24), start);
      if (ID_LABEL.test(before) || /[[,]\s*\\?["']$/.test(before)) continue;
      // `sha256sum` output: the hash, two blanks (or " *"), a file name.
      if (start === lineStart && /^(?: \*| {2})\S/.test(text.slice(end, end + 3))) continue;
      found.push({ start, end, kind: 'hex_key' });
    }
    return found;
  },
};

/** Base64 of printable text (`VGhlIHF1aWNr…` is "The quick…"): a key decodes to random bytes. */
function encodesText(run: string): boolean {
  let decoded: string;
  try {
    decoded = atob(run);
  } catch {
    return false;
  }
  let printable = 0;
  for (let i = 0; i < decoded.length; i++) {
    const c = decoded.charCodeAt(i);
    if ((c >= 0x20 && c < 0x7f) || c === 0x09 || c === 0x0a || c === 0x0d) printable++;
  }
  return printable >= decoded.length * 0.9;
}

export const bareBase64Finder: Finder = {
  name: 'bare_base64',
  find(text) {
    const found: Finding[] = [];
    for (const [start, end] of runs(text, 40, BASE64_CHARS)) {
      if (end - start !== 40 || text.charCodeAt(end) === 0x3d) continue;
      const run = text.slice(start, end);
      if (!/[a-z]/.test(run) || !/[A-Z]/.test(run) || !/[0-9]/.test(run)) continue;
      if (entropy(run) < 4 || wordShare(run) >= 0.5 || encodesText(run)) continue;
      found.push({ start, end, kind: 'aws_secret_key' });
    }
    return found;
  },
};

/** Upper case, lower case and a digit, entropy of `bits` a character, not words (`readsAsWords`), not the base64 of text. */
function generatedBase64(run: string, bits: number): boolean {
  if (!/[a-z]/.test(run) || !/[A-Z]/.test(run) || !/[0-9]/.test(run)) return false;
  return entropy(run) >= bits && !readsAsWords(run) && !encodesText(run);
}

const isLineBreak = (c: number) => c === 0x0a || c === 0x0d || c === 0x2028 || c === 0x2029;
/** What may stand beside a body line on its line: indentation, quotes, a JSON escape's backslash, a comma, diff and quote marks. */
const LINE_BEFORE = /^[\s"'`>|\\-]*$/;
const LINE_AFTER = /^={0,2}[\s"'`,\\]*$/;
/** Farther than this from a line break, a run is not alone on its line. */
const LINE_SLACK = 16;

/** `[start, end)` is alone on its line: only `LINE_BEFORE` before it and `LINE_AFTER` after it (its `=` padding included). */
function aloneOnLine(text: string, start: number, end: number): { end: number } | undefined {
  let from = start;
  while (from > 0 && start - from <= LINE_SLACK && !isLineBreak(text.charCodeAt(from - 1))) from--;
  if (from > 0 && !isLineBreak(text.charCodeAt(from - 1))) return undefined;
  let to = end;
  while (to < text.length && to - end <= LINE_SLACK && !isLineBreak(text.charCodeAt(to))) to++;
  if (to < text.length && !isLineBreak(text.charCodeAt(to))) return undefined;
  if (!LINE_BEFORE.test(text.slice(from, start)) || !LINE_AFTER.test(text.slice(end, to))) return undefined;
  let padded = end;
  while (padded < end + 2 && text.charCodeAt(padded) === 0x3d) padded++;
  return { end: padded };
}

/** The shortest last line of a body worth taking with the line before it. */
const TAIL_MIN = 4;

/** The base64 run alone on the line after `end`'s, shorter than a full line: a body's last line. */
function tailLine(text: string, end: number): Finding | undefined {
  let i = end;
  while (i < text.length && i - end <= LINE_SLACK && !isLineBreak(text.charCodeAt(i))) i++;
  // One line break (CRLF counts as one), then the next line's leading marks.
  if (text.charCodeAt(i) === 0x0d && text.charCodeAt(i + 1) === 0x0a) i++;
  if (!isLineBreak(text.charCodeAt(i))) return undefined;
  i++;
  const lineStart = i;
  while (i < text.length && i - lineStart <= LINE_SLACK && !BASE64_CHARS[text.charCodeAt(i)] && !isLineBreak(text.charCodeAt(i))) i++;
  const start = i;
  while (i < text.length && text.charCodeAt(i) < 128 && BASE64_CHARS[text.charCodeAt(i)]) i++;
  if (i - start < TAIL_MIN || i - start >= 60) return undefined;
  const alone = aloneOnLine(text, start, i);
  return alone ? { start, end: alone.end, kind: 'private_key' } : undefined;
}

export const pemLineFinder: Finder = {
  name: 'pem_line',
  find(text) {
    const found: Finding[] = [];
    for (const [start, end] of runs(text, 60, BASE64_CHARS)) {
      if (end - start > 76) continue;
      const alone = aloneOnLine(text, start, end);
      if (!alone || !generatedBase64(text.slice(start, end), 4.5)) continue;
      found.push({ start, end: alone.end, kind: 'private_key' });
      const tail = tailLine(text, alone.end);
      if (tail) found.push(tail);
    }
    return found;
  },
};

const isPrefixChar = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x7a);
const isSeparator = (c: number) => c === 0x5f || c === 0x2d;
/** Before a token's prefix: a path, a host, a file name's part or a package's scope, not a token. */
const NOT_BEFORE = new Set(['/', '.', '@', '\\', '#', '~', '$', '%']);
/** A hash's name before its digest (`sha384-` in a script's integrity attribute, `md5-`). */
const HASH_PREFIX = /^(?:sha\d*|md5|blake\d*[bs]?|xxh\d*|crc\d*|murmur\d*|hmac)[_-]/;
/** The shortest random part: 30 (`xyz-4kR9vT2pL8mQ3nW7bJ6hF1cD5sG0aZ`); ids run shorter (`chatcmpl-` 29, `msg_` 24). */
const VENDOR_MIN = 30;
/** The least entropy of the random part (random letters and digits of 30 average 4.5; hex tops out at 4). */
const VENDOR_BITS = 3.7;

/** Where the prefix of the token whose random part starts at `start` starts, or -1: one or two parts, then `_` or `-`. */
function vendorPrefix(text: string, start: number): number {
  let at = start;
  for (let part = 0; part < 2; part++) {
    if (!isSeparator(text.charCodeAt(at - 1))) return part === 0 ? -1 : at;
    let from = at - 1;
    while (from > 0 && at - 1 - from < 9 && isPrefixChar(text.charCodeAt(from - 1))) from--;
    const length = at - 1 - from;
    if (length < 2 || length > 8 || isPrefixChar(text.charCodeAt(from - 1))) return part === 0 ? -1 : at;
    // The token's first part starts with a letter (`acme_`, `sk2_`), not a number (`2024-`).
    if (!(text.charCodeAt(from) >= 0x61 && text.charCodeAt(from) <= 0x7a)) return part === 0 ? -1 : at;
    at = from;
  }
  return at;
}

export const vendorTokenFinder: Finder = {
  name: 'vendor_token',
  find(text) {
    const found: Finding[] = [];
    for (const [start, end] of runs(text, VENDOR_MIN, ALNUM_CHARS)) {
      const from = vendorPrefix(text, start);
      if (from === -1) continue;
      // A longer name (`my_long_service_<…>`), a path, a host, a scope, an escape before it.
      const before = text.charAt(from - 1);
      if (isSeparator(text.charCodeAt(from - 1)) || NOT_BEFORE.has(before)) continue;
      // More parts after it are the token's (`…_<checksum>`); a file name or a host is not a token.
      let to = end;
      while (isSeparator(text.charCodeAt(to)) && to + 1 < text.length && ALNUM_CHARS[text.charCodeAt(to + 1)]) {
        to++;
        while (to < text.length && text.charCodeAt(to) < 128 && ALNUM_CHARS[text.charCodeAt(to)]) to++;
      }
      // Base64 goes on (`sha512-…+…==`, an integrity hash); a path, an address, a file name or a host ends it.
      const after = text.charCodeAt(to);
      if (after === 0x2b || after === 0x2f || after === 0x3d || after === 0x40) continue;
      if (after === 0x2e && ALNUM_CHARS[text.charCodeAt(to + 1)] === 1) continue;
      if (HASH_PREFIX.test(text.slice(from, start))) continue;
      const run = text.slice(start, end);
      if (!/[0-9]/.test(run) || !/[A-Za-z]/.test(run) || /^[0-9a-f]+$|^[0-9A-F]+$/.test(run)) continue;
      if (entropy(run) < VENDOR_BITS || readsAsWords(run)) continue;
      found.push({ start: from, end: to, kind: 'vendor_token' });
    }
    return found;
  },
};
