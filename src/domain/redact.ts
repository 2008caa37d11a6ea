/**
 * Secret redaction for text that leaves the request path: transcripts sent to extraction
 * and reflections before they are stored. Each rule is one precompiled regular expression;
 * a match becomes `[REDACTED:<kind>]`. Rules run from the most specific (a PEM block, a
 * provider's key format) to the most generic (`password=...`), so a key inside an
 * assignment is named by its provider, and every rule leaves an existing `[REDACTED:...]`
 * marker alone, which makes redaction idempotent.
 *
 * It runs on every final answer (up to 48 KB of transcript), so a rule whose pattern the
 * regex engine cannot skip through quickly names the places where a match can start
 * (`starts`): the occurrences of a rare character or a literal, found with `indexOf`
 * once per version of the text and shared between rules. The pattern then runs only
 * there, as a sticky copy, with the same result as a scan of the whole text.
 */

export type SecretKind =
  | 'private_key'
  | 'url_password'
  | 'bearer_token'
  | 'anthropic_key'
  | 'openai_key'
  | 'github_token'
  | 'aws_access_key_id'
  | 'aws_secret_key'
  | 'slack_token'
  | 'slack_webhook'
  | 'google_api_key'
  | 'stripe_key'
  | 'jwt'
  | 'engram_token'
  | 'password'
  | 'secret';

const marker = (kind: SecretKind): string => `[REDACTED:${kind}]`;

/** A value that only stands for a secret: a variable, a template slot, a mask, a marker. */
const PLACEHOLDER = /^(?:\$|<|\{\{|%[sd(]|\*{3}|x{4}|\.\.\.|…|\[REDACTED)|^(?:your|my|the)[-_ ]/i;

/** Words that, as a whole value, are code or a type rather than a secret. */
const CODE_WORDS = new Set(
  (
    'true false null none nil undefined await new this self function str string int integer ' +
    'number bool boolean bytes buffer optional required object any unknown void char text ' +
    'include omit secret password token hidden redacted empty env'
  ).split(' '),
);

/** The key of an assignment names a secret: `DB_PASSWORD`, `apiKey`, `x-api-key`, `client_secret`. */
const SECRET_KEY_WORD =
  '(?:passwd|password|passphrase|pwd|secret|secret[_-]?key|api[_ -]?key|apikey|access[_-]?key|' +
  'private[_-]?key|auth[_-]?token|access[_-]?token|refresh[_-]?token|token)';

/** What a rule's replacer sees of one match. */
interface Match {
  text: string;
  /** Capture groups in order; `undefined` for a group that did not take part. */
  groups: (string | undefined)[];
  offset: number;
  input: string;
}

interface Rule {
  kind: SecretKind;
  /** Global; what the rule redacts. */
  pattern: RegExp;
  /** Builds the replacement; by default the whole match becomes the marker. */
  replace?: (match: Match) => string;
  /**
   * Every index where a match that `replace` changes can start (more do no harm), found
   * without running `pattern` over the whole text; a match it skips must not overlap one
   * it lists. Without it the pattern scans the whole text, about 10 µs per 48 KB for a
   * pattern that starts with a rare literal, far more for one that starts with a class.
   */
  starts?: (text: string, anchors: Anchors) => number[];
}

const RULES: readonly Rule[] = [
  {
    // The whole block, headers included. A block cut off before its END line (a truncated
    // tool output) is redacted up to where its base64 body stops. The bound keeps one
    // BEGIN from swallowing the rest of a long transcript (a 4096-bit key is ~3.3 kB).
    kind: 'private_key',
    pattern:
      /-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]{0,12000}?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s\\:,-]*)/g,
    starts: (t, a) => before(t, a.of('BEGIN '), '-----'),
  },
  {
    // scheme://user:PASSWORD@host keeps the user and the host, which say where things are.
    // The user may be empty (`redis://:PASSWORD@cache`).
    kind: 'url_password',
    pattern: /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/?#@'"`[\]]*:)(?![$<{%*]|\[REDACTED)[^\s/?#@'"`]+@/gi,
    replace: (m) => `${m.groups[0]}${marker('url_password')}@`,
    starts: schemeStarts,
  },
  {
    kind: 'bearer_token',
    pattern: /\b(authorization["']?\s*[:=]\s*["']?(?:bearer|basic|token|digest)\s+)(?![$<{]|\[REDACTED)[^\s"'`,;]{8,}/gi,
    replace: (m) => m.groups[0] + marker('bearer_token'),
    starts: (_, a) => a.memo(separatorStarts, separatorStarts).authorization,
  },
  {
    // A long bearer credential outside a header line; it must hold a digit so prose
    // ("bearer authentication-required") stays.
    kind: 'bearer_token',
    pattern: /\b(bearer\s+)(?![$<{]|\[REDACTED)(?=[A-Za-z._~+/=-]*\d)[A-Za-z0-9._~+/=-]{20,}/gi,
    replace: (m) => m.groups[0] + marker('bearer_token'),
    starts: (_, a) => a.memo(keyWords, keyWords).bearer,
  },
  { kind: 'anthropic_key', pattern: /\bsk-ant-[A-Za-z0-9_-]{20,}/g, starts: shared(skStarts) },
  {
    // sk-..., sk-proj-..., sk-svcacct-..., OpenRouter's sk-or-v1-...; random keys hold a
    // digit, hyphenated words ("sk-learn-style-...") do not.
    kind: 'openai_key',
    pattern: /\bsk-(?=[A-Za-z_-]*\d)[A-Za-z0-9_-]{20,}/g,
    starts: shared(skStarts),
  },
  {
    kind: 'github_token',
    pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})/g,
    starts: (t, a) => before(t, a.of('_'), 'ghp', 'gho', 'ghu', 'ghs', 'ghr', 'github'),
  },
  {
    kind: 'aws_access_key_id',
    pattern: /\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b/g,
    starts: (t, a) => a.of('A').filter((i) => /[KSBC]/.test(t.charAt(i + 1))),
  },
  { kind: 'slack_token', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g, starts: (_, a) => a.of('xox') },
  {
    kind: 'slack_webhook',
    pattern: /\bhttps:\/\/hooks\.slack\.com\/(?:services|workflows)\/[A-Za-z0-9/_-]+/g,
    starts: (t, a) => before(t, a.of(':').filter((i) => t.startsWith('//hooks.slack.com/', i + 1)), 'https'),
  },
  { kind: 'google_api_key', pattern: /\bAIza[0-9A-Za-z_-]{35}/g, starts: (t, a) => a.of('A').filter((i) => t.startsWith('Iza', i + 1)) },
  {
    kind: 'stripe_key',
    pattern: /\b(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9+/=]{24,})/g,
    starts: (t, a) => before(t, a.of('_'), 'sk', 'rk', 'whsec'),
  },
  {
    kind: 'jwt',
    pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g,
    starts: (t, a) => before(t, a.of('J'), 'ey'),
  },
  { kind: 'engram_token', pattern: /\begm_[A-Za-z0-9_-]{20,}/g, starts: (t, a) => before(t, a.of('_'), 'egm') },
  {
    kind: 'aws_secret_key',
    pattern: /\b((?:aws_?)?secret_?access_?key["']?\s*[:=]\s*["']?)[A-Za-z0-9/+=]{30,}/gi,
    replace: (m) => m.groups[0] + marker('aws_secret_key'),
    // "secret" starts the match, or follows "aws" or "aws_"; "access" follows it.
    starts: (t, a) =>
      a
        .memo(keyWords, keyWords)
        .secret
        .filter((i) => startsWithFolded(t, t.charCodeAt(i + 6) === UNDERSCORE ? i + 7 : i + 6, 'access'))
        .flatMap((i) => [i - 4, i - 3, i].filter((p) => p >= 0)),
  },
  {
    // A bare 40-character base64 string is an AWS secret only near "aws" or "secret"; git
    // hashes (hex) and identifiers (one case, or no digit or symbol) are left alone.
    kind: 'aws_secret_key',
    pattern: /(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/g,
    replace: (m) => {
      const before = m.input.slice(Math.max(0, m.offset - AWS_CONTEXT), m.offset);
      const random = /[a-z]/.test(m.text) && /[A-Z]/.test(m.text) && /[0-9/+]/.test(m.text);
      return random && /aws|secret/i.test(before) ? marker('aws_secret_key') : m.text;
    },
    starts: awsSecretStarts,
  },
  {
    // `key = value`, `key: value`, `"key": "value"`, the same JSON-escaped inside JSON,
    // `key := value`. Only the value is replaced.
    kind: 'secret',
    pattern: new RegExp(
      `(${SECRET_KEY_WORD}(?![A-Za-z0-9_])\\\\?["'\`]?[ \\t]*(:=|=(?![=>])|:(?![:/]))[ \\t]*)` +
        `(?:"([^"\\n]{3,300})"|'([^'\\n]{3,300})'|\\\\"((?:[^"\\\\\\n]|\\\\[^"\\n]){3,300})\\\\"|([^\\s"'\`,;&<>()[\\]{}\\\\]{3,}))`,
      'gi',
    ),
    replace: redactAssignment,
    starts: (_, a) => a.memo(separatorStarts, separatorStarts).assignment,
  },
  {
    // Command-line flags: `--password hunter2` (`--api-key=...` is an assignment, above).
    kind: 'secret',
    pattern: /(--?(?:password|passwd|token|api-key|apikey|secret|client-secret)[ \t]+)(?![-$<{]|\[REDACTED)[^\s"'`]{3,}/gi,
    replace: (m) => {
      const head = m.groups[0] ?? '';
      const value = m.text.slice(head.length);
      return looksLikeCode(value, head) ? m.text : head + marker(/pass/i.test(head) ? 'password' : 'secret');
    },
    // At a dash followed by (a dash and) the start of a flag name.
    starts: (t, a) =>
      a.of('-').filter((i) => {
        const name = t.charCodeAt(i + 1) === DASH ? i + 2 : i + 1;
        return isKeyWordInitial(t.charCodeAt(name)) && FLAG_STEMS.some((stem) => startsWithFolded(t, name, stem));
      }),
  },
];

function redactAssignment(m: Match): string {
  const [head = '', separator = '', dq, sq, escaped, bare] = m.groups;
  const kind: SecretKind = /pass|pwd/i.test(head) ? 'password' : 'secret';
  if (bare !== undefined) {
    // Unquoted values are where code and prose live: `password: string`, `token = getToken()`.
    if (looksLikeCode(bare, head)) return m.text;
    if (separator === ':' && !looksRandomish(bare) && !standsAlone(m)) return m.text;
    return head + marker(kind);
  }
  const value = (dq ?? sq ?? escaped ?? '').trim();
  if (value === '' || PLACEHOLDER.test(value) || CODE_WORDS.has(value.toLowerCase())) return m.text;
  const quote = dq !== undefined ? '"' : sq !== undefined ? "'" : '\\"';
  return `${head}${quote}${marker(kind)}${quote}`;
}

/** An unquoted value that is code or a type (`req.body.password`, `getToken()`, `string`). */
function looksLikeCode(value: string, key: string): boolean {
  const lower = value.toLowerCase();
  if (PLACEHOLDER.test(value) || CODE_WORDS.has(lower)) return true;
  if (/^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/.test(value)) return true; // a dotted path
  // An identifier naming the secret again (`newToken`, `apiKey`, `SecretBox`); a digit
  // makes it a (weak) password instead (`Password123`).
  const word = key.toLowerCase().match(/passw(?:or)?d|secret|token|key|pwd/)?.[0];
  return word !== undefined && /^[A-Za-z_$][A-Za-z_$]*$/.test(value) && lower.includes(word);
}

/** After a colon prose is common ("Secret: nobody knows"); a value with digits or symbols, or a long one, counts. */
function looksRandomish(value: string): boolean {
  return /[^A-Za-z]/.test(value) || value.length >= 12;
}

/** `password: hunter` alone on its line (YAML, a header, a config dump), not inside a sentence. */
function standsAlone(m: Match): boolean {
  const lineStart = m.input.lastIndexOf('\n', m.offset - 1) + 1;
  const lineEnd = m.input.indexOf('\n', m.offset);
  const after = m.input.slice(m.offset + m.text.length, lineEnd === -1 ? undefined : lineEnd);
  return /^[\s"'-]*[\w.-]*$/.test(m.input.slice(lineStart, m.offset)) && /^\s*$/.test(after);
}

/**
 * Replaces secrets in `text` with `[REDACTED:<kind>]`: provider API keys, GitHub, Slack,
 * Google, Stripe and AWS credentials, PEM private keys, passwords in URLs, bearer tokens,
 * JWTs, Engram access tokens and `password=` / `api_key:` style assignments. Ordinary
 * prose and code pass through unchanged. Idempotent.
 */
export function redactSecrets(text: string): string {
  let out = text;
  let anchors = new Anchors(out);
  for (const rule of COMPILED) {
    const next = rule.starts ? replaceAt(rule, out, rule.starts(out, anchors)) : replaceAll(rule, out);
    if (next !== out) anchors = new Anchors(next);
    out = next;
  }
  return out;
}

interface CompiledRule extends Rule {
  /** `pattern` made sticky, to try one start index at a time. */
  sticky: RegExp;
}

const COMPILED: readonly CompiledRule[] = RULES.map((rule) => ({
  ...rule,
  sticky: new RegExp(rule.pattern.source, rule.pattern.flags.replace('g', 'y')),
}));

/** `text` itself when nothing changed, so the anchors found in it stay valid without a comparison. */
function replaceAll(rule: Rule, text: string): string {
  let changed = false;
  const out = text.replace(rule.pattern, (...args: unknown[]) => {
    // String.replace passes (match, ...groups, offset, input); no rule uses named groups.
    const input = args[args.length - 1] as string;
    const offset = args[args.length - 2] as number;
    const groups = args.slice(1, -2) as (string | undefined)[];
    const replacement = rule.replace ? rule.replace({ text: args[0] as string, groups, offset, input }) : marker(rule.kind);
    if (replacement !== args[0]) changed = true;
    return replacement;
  });
  return changed ? out : text;
}

/** What `replaceAll` does, trying the pattern only at `starts`: a global scan would find the same matches there. */
function replaceAt(rule: CompiledRule, text: string, indexes: readonly number[]): string {
  if (indexes.length === 0) return text;
  // Lists can be shared between rules: sort a copy.
  const starts = isAscending(indexes) ? indexes : [...indexes].sort((a, b) => a - b);
  let out = '';
  let copied = 0;
  // Like a global scan, the next match cannot start inside the previous one.
  let cursor = 0;
  for (const start of starts) {
    if (start < cursor) continue;
    rule.sticky.lastIndex = start;
    const match = rule.sticky.exec(text);
    if (match === null) continue;
    const end = start + match[0].length;
    const replacement = rule.replace
      ? rule.replace({ text: match[0], groups: match.slice(1), offset: start, input: text })
      : marker(rule.kind);
    if (replacement !== match[0]) {
      out += text.slice(copied, start) + replacement;
      copied = end;
    }
    cursor = Math.max(end, start + 1);
  }
  return copied === 0 ? text : out + text.slice(copied);
}

function isAscending(list: readonly number[]): boolean {
  for (let i = 1; i < list.length; i++) if (list[i] < list[i - 1]) return false;
  return true;
}

/**
 * What the rules look for in one version of the text (the indexes of a character, of a
 * word), found once and shared by every rule that anchors on it.
 */
class Anchors {
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
function shared(starts: (text: string, anchors: Anchors) => number[]): (text: string, anchors: Anchors) => number[] {
  return (_, anchors) => anchors.memo(starts, starts);
}

/** `sk-` starts OpenAI and Anthropic keys. */
function skStarts(text: string, anchors: Anchors): number[] {
  return before(text, anchors.of('-'), 'sk');
}

const KEY_WORDS = /aws|secret|bearer/gi;
/** How far before a bare AWS secret "aws" or "secret" must be. */
const AWS_CONTEXT = 80;
const AWS_SECRET_LENGTH = 40;
const PROBE = AWS_SECRET_LENGTH / 2;
/** How the flag names start: password, passwd, token, api-key, apikey, secret, client-secret. */
const FLAG_STEMS = ['pas', 'tok', 'api', 'sec', 'cli'];
const DASH = 0x2d;
const UNDERSCORE = 0x5f;

/** Where "aws", "secret" and "bearer" (in any case) start, found in one scan. */
function keyWords(text: string, anchors: Anchors): { aws: number[]; secret: number[]; bearer: number[] } {
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
function before(text: string, indexes: readonly number[], ...prefixes: string[]): number[] {
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
function schemeStarts(text: string, anchors: Anchors): number[] {
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
function awsSecretStarts(text: string, anchors: Anchors): number[] {
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
 *   - a key word (`SECRET_KEY_WORD`), then a backslash, a quote and blanks, ends before it,
 *     and starts at most 13 characters earlier (`refresh_token`).
 */
function separatorStarts(text: string, anchors: Anchors): { authorization: number[]; assignment: number[] } {
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
    if (end > floor && text.charCodeAt(end - 1) === BACKSLASH) end--;
    if (!endsWithKeyWord(text, end)) continue;
    for (let i = Math.max(floor, end - 13); i <= end - 3; i++) {
      if (isKeyWordInitial(text.charCodeAt(i))) assignment.push(i);
    }
  }
  return { authorization, assignment };
}

/** Every key word in `SECRET_KEY_WORD` ends with one of these words, and starts with p, s, a, r or t. */
function endsWithKeyWord(text: string, end: number): boolean {
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
const isKeyWordInitial = (c: number) => 'psartc'.includes(String.fromCharCode(c | 0x20));
const BACKSLASH = 0x5c;

/** `text[0, end)` ends with `word` (lowercase ASCII letters), ignoring ASCII case like a regex's `i` flag. */
function endsWithFolded(text: string, end: number, word: string): boolean {
  const start = end - word.length;
  if (start < 0) return false;
  for (let i = 0; i < word.length; i++) if ((text.charCodeAt(start + i) | 0x20) !== word.charCodeAt(i)) return false;
  return true;
}

/** `text` has `word` (lowercase ASCII letters) at `start`, ignoring ASCII case. */
function startsWithFolded(text: string, start: number, word: string): boolean {
  return endsWithFolded(text, start + word.length, word);
}

const isLetter = (c: number) => (c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isWordChar = (c: number) => isLetter(c) || isDigit(c) || c === 0x5f;
/** `[a-z0-9+.-]` under the `i` flag. */
const isSchemeChar = (c: number) => isLetter(c) || isDigit(c) || c === 0x2b || c === 0x2e || c === DASH;
const isBase64 = (c: number) => isLetter(c) || isDigit(c) || c === 0x2b || c === 0x2f;
const isBlank = (c: number) => c === 0x20 || c === 0x09;
const isQuote = (c: number) => c === 0x22 || c === 0x27 || c === 0x60;
/** `\s` of a regular expression. */
const isSpace = (c: number) => c === 0x20 || (c >= 0x09 && c <= 0x0d) || (c > 0x7f && /\s/.test(String.fromCharCode(c)));
