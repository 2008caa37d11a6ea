/**
 * Where the redaction rules can match, found with cheap scans (indexOf, char codes)
 * instead of running every pattern over the whole text.
 */
/**
 * What the rules look for in one version of the text (the indexes of a character, of a
 * word), found once and shared by every rule that anchors on it.
 */
export class Anchors {
  private readonly found = new Map<unknown, unknown>();

  constructor(private readonly text: string) {}

  /** The indexes of `needle` (a string, or a global regular expression), ascending. */
  of(needle: string | RegExp): number[] {
    return this.memo(needle, () => {
      const list: number[] = [];
      if (typeof needle === 'string') {
        for (let i = this.text.indexOf(needle); i !== -1; i = this.text.indexOf(needle, i + 1)) list.push(i);
      } else {
        needle.lastIndex = 0;
        for (let m = needle.exec(this.text); m !== null; m = needle.exec(this.text)) list.push(m.index);
      }
      return list;
    });
  }

  /** `compute`'s result, computed once per version of the text; `key` names it. */
  memo<T>(key: unknown, compute: (text: string, anchors: Anchors) => T): T {
    if (this.found.has(key)) return this.found.get(key) as T;
    const value = compute(this.text, this);
    this.found.set(key, value);
    return value;
  }
}

/** A `starts` function whose result two rules share. */
export function shared(starts: (text: string, anchors: Anchors) => number[]): (text: string, anchors: Anchors) => number[] {
  return (_, anchors) => anchors.memo(starts, starts);
}

/** `sk-` starts OpenAI and Anthropic keys. */
export function skStarts(text: string, anchors: Anchors): number[] {
  return before(text, anchors.of('-'), 'sk');
}

export const KEY_WORDS = /aws|secret|bearer/gi;
/** How far before a bare AWS secret "aws" or "secret" must be. */
export const AWS_CONTEXT = 80;
export const AWS_SECRET_LENGTH = 40;
export const PROBE = AWS_SECRET_LENGTH / 2;
/** How the flag names start: password, passwd, token, api-key, apikey, secret, client-secret. */
export const FLAG_STEMS = ['pas', 'tok', 'api', 'sec', 'cli'];
export const DASH = 0x2d;
export const UNDERSCORE = 0x5f;

/** Where "aws", "secret" and "bearer" (in any case) start, found in one scan. */
export function keyWords(text: string, anchors: Anchors): { aws: number[]; secret: number[]; bearer: number[] } {
  const found = { aws: [] as number[], secret: [] as number[], bearer: [] as number[] };
  for (const i of anchors.of(KEY_WORDS)) {
    const initial = text.charCodeAt(i) | 0x20;
    if (initial === 0x62) found.bearer.push(i);
    else if (initial === 0x73) found.secret.push(i);
    else {
      found.aws.push(i);
      // The one overlap the scan skips: "awsecret".
      if (startsWithFolded(text, i + 2, 'secret')) found.secret.push(i + 2);
    }
  }
  return found;
}

/** `index - prefix.length` for each index that one of `prefixes` ends at. */
export function before(text: string, indexes: readonly number[], ...prefixes: string[]): number[] {
  const out: number[] = [];
  for (const i of indexes) {
    const previous = text.charCodeAt(i - 1);
    for (const prefix of prefixes) {
      const start = i - prefix.length;
      if (previous === prefix.charCodeAt(prefix.length - 1) && start >= 0 && text.startsWith(prefix, start)) out.push(start);
    }
  }
  return out;
}

/**
 * Where a URL scheme can start: a letter after a word boundary, in the run of scheme
 * characters before a `://` that an `@` follows with no `/` in between.
 */
export function schemeStarts(text: string, anchors: Anchors): number[] {
  const out: number[] = [];
  let at = -1;
  for (const colon of anchors.of(':')) {
    if (!text.startsWith('//', colon + 1)) continue;
    if (at < colon) at = text.indexOf('@', colon + 3);
    if (at === -1) break;
    const slash = text.indexOf('/', colon + 3);
    if (slash !== -1 && slash < at) continue;
    let from = colon;
    while (from > 0 && isSchemeChar(text.charCodeAt(from - 1))) from--;
    for (let i = from; i < colon; i++) {
      if (isLetter(text.charCodeAt(i)) && (i === 0 || !isWordChar(text.charCodeAt(i - 1)))) out.push(i);
    }
  }
  return out;
}

/**
 * Starts of 40-character base64 runs at most `AWS_CONTEXT` characters after "aws" or
 * "secret": the only matches the rule changes (every match is a whole run, so the ones
 * skipped never overlap them). Such a run covers two consecutive multiples of 20, which
 * are probed first.
 */
export function awsSecretStarts(text: string, anchors: Anchors): number[] {
  const { aws, secret } = anchors.memo(keyWords, keyWords);
  // Sorted by the word, so both ends of the windows ascend (words overlap only in "awsecret").
  const windows = [...aws.map((i) => [i + 3, i + AWS_CONTEXT]), ...secret.map((i) => [i + 6, i + AWS_CONTEXT])];
  if (aws.length > 0 && secret.length > 0) windows.sort((a, b) => a[0] - b[0]);
  const out: number[] = [];
  let pushed = -1;
  for (const [from, to] of windows) {
    for (let probe = Math.ceil(from / PROBE) * PROBE; probe < to + PROBE; probe += PROBE) {
      if (!isBase64(text.charCodeAt(probe)) || !isBase64(text.charCodeAt(probe + PROBE))) continue;
      let start = probe;
      while (probe - start < AWS_SECRET_LENGTH && isBase64(text.charCodeAt(start - 1))) start--;
      let end = probe + 1;
      while (end - start <= AWS_SECRET_LENGTH && isBase64(text.charCodeAt(end))) end++;
      // A run found in an earlier window was pushed then, if it started in it.
      if (end - start !== AWS_SECRET_LENGTH || isBase64(text.charCodeAt(start - 1))) continue;
      if (start >= from && start <= to && start > pushed) out.push((pushed = start));
    }
  }
  return out;
}

/**
 * Where a header or an assignment can start, found from each `:` and `=` in one pass (a
 * key holds neither, so it starts after the previous one):
 *   - `authorization`, then a quote and whitespace, ends before the separator;
 *   - a key word (`SECRET_KEY_WORD`), then up to three backslashes, a quote and blanks, ends before it,
 *     and starts at most 13 characters earlier (`refresh_token`).
 */
export function separatorStarts(text: string, anchors: Anchors): { authorization: number[]; assignment: number[] } {
  const authorization: number[] = [];
  const assignment: number[] = [];
  const colons = anchors.of(':');
  const equals = anchors.of('=');
  let previous = -1;
  for (let c = 0, e = 0; c < colons.length || e < equals.length; ) {
    const separator = e >= equals.length || (c < colons.length && colons[c] < equals[e]) ? colons[c++] : equals[e++];
    const floor = previous + 1;
    previous = separator;
    let end = separator;
    while (end > floor && isBlank(text.charCodeAt(end - 1))) end--;
    let header = end;
    while (header > floor && isSpace(text.charCodeAt(header - 1))) header--;
    if (header > floor && (text.charCodeAt(header - 1) === 0x22 || text.charCodeAt(header - 1) === 0x27)) header--;
    if (endsWithFolded(text, header, 'authorization')) authorization.push(header - 13);
    if (end > floor && isQuote(text.charCodeAt(end - 1))) end--;
    for (let n = 0; n < 3 && end > floor && text.charCodeAt(end - 1) === BACKSLASH; n++) end--;
    if (!endsWithKeyWord(text, end)) continue;
    for (let i = Math.max(floor, end - 13); i <= end - 3; i++) {
      if (isKeyWordInitial(text.charCodeAt(i))) assignment.push(i);
    }
  }
  return { authorization, assignment };
}

/** Every key word in `SECRET_KEY_WORD` ends with one of these words, and starts with p, s, a, r or t. */
export function endsWithKeyWord(text: string, end: number): boolean {
  switch (text.charCodeAt(end - 1) | 0x20) {
    case 0x64: // d
      return endsWithFolded(text, end, 'pwd') || endsWithFolded(text, end, 'passwd') || endsWithFolded(text, end, 'password');
    case 0x65: // e
      return endsWithFolded(text, end, 'passphrase');
    case 0x74: // t
      return endsWithFolded(text, end, 'secret');
    case 0x79: // y
      return endsWithFolded(text, end, 'key');
    case 0x6e: // n
      return endsWithFolded(text, end, 'token');
    default:
      return false;
  }
}

/** p, s, a, r, t or c in either case: how key words and flag names start. */
export const isKeyWordInitial = (c: number) => 'psartc'.includes(String.fromCharCode(c | 0x20));
export const BACKSLASH = 0x5c;

/** `text[0, end)` ends with `word` (lowercase ASCII letters), ignoring ASCII case like a regex's `i` flag. */
export function endsWithFolded(text: string, end: number, word: string): boolean {
  const start = end - word.length;
  if (start < 0) return false;
  for (let i = 0; i < word.length; i++) if ((text.charCodeAt(start + i) | 0x20) !== word.charCodeAt(i)) return false;
  return true;
}

/** `text` has `word` (lowercase ASCII letters) at `start`, ignoring ASCII case. */
export function startsWithFolded(text: string, start: number, word: string): boolean {
  return endsWithFolded(text, start + word.length, word);
}

export const isLetter = (c: number) => (c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a;
export const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
export const isWordChar = (c: number) => isLetter(c) || isDigit(c) || c === 0x5f;
/** `[a-z0-9+.-]` under the `i` flag. */
export const isSchemeChar = (c: number) => isLetter(c) || isDigit(c) || c === 0x2b || c === 0x2e || c === DASH;
export const isBase64 = (c: number) => isLetter(c) || isDigit(c) || c === 0x2b || c === 0x2f;
export const isBlank = (c: number) => c === 0x20 || c === 0x09;
export const isQuote = (c: number) => c === 0x22 || c === 0x27 || c === 0x60;
/** `\s` of a regular expression. */
export const isSpace = (c: number) => c === 0x20 || (c >= 0x09 && c <= 0x0d) || (c > 0x7f && /\s/.test(String.fromCharCode(c)));
