/**
 * The two secret shapes redacted with no name, prefix or command beside them, because
 * agents paste them bare ("use wJalrX…", a key alone on a line) and nothing else would
 * catch them. Both are found by probing: a run of N characters covers two consecutive
 * multiples of N/2, so only those indexes are looked at before a run is measured.
 *
 * - A 64-digit hex run (a 256-bit key: Flask/Django secrets, HMAC keys, an Ethereum private
 *   key after `0x`), unless the line says it is a hash (`sha256`, `digest`, `commit`,
 *   `checksum`, `integrity`…) or it starts a line of `sha256sum` output. Git's SHA-1
 *   hashes are 40 digits and never match.
 * - A 40-character base64 run that looks generated (an AWS secret access key and the like):
 *   upper and lower case, a digit, entropy of 4 bits a character (a random one averages
 *   4.8), not mostly words, and not the base64 of printable text. Exactly 40: base64 blobs
 *   and paths run longer or break at `.` and `-`.
 */
import { entropy, wordShare } from './redact-entropy.js';
import type { Finder, Finding } from './redact-rule.js';

/** Character classes as tables: these loops look at most characters of every text. */
const classTable = (chars: string): Uint8Array => {
  const table = new Uint8Array(128);
  for (let i = 0; i < chars.length; i++) table[chars.charCodeAt(i)] = 1;
  return table;
};
const HEX_CHARS = classTable('0123456789abcdefABCDEF');
const BASE64_CHARS = classTable('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/');

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
