/**
 * Secret redaction for text that leaves the request path: transcripts sent to extraction
 * and reflections before they are stored. A match becomes `[REDACTED:<kind>]`. Steps run
 * from the most specific (a PEM block, a provider's key format) to the most generic
 * (`password=...`, a high-entropy value beside a credential word), so a key inside an
 * assignment is named by its provider, and every step leaves an existing `[REDACTED:...]`
 * marker alone, which makes redaction idempotent.
 *
 * Where the rules come from (`steps` gives the order):
 * - secretlint's recommended preset (`ruleset.ts`) and gitleaks' rules (`gitleaks.ts`),
 *   maintained, for the provider formats they know;
 * - Engram's own rules below, where the preset's rule only takes a provider's exact current
 *   format (OpenAI's `T3BlbkFJ`, Anthropic's 108 characters, GitHub's 36) and misses older,
 *   shorter or test keys that are still secrets, or has no rule (bearer headers, JWTs, PEM
 *   blocks cut short, passwords in URLs with the host kept, Engram's own tokens);
 * - `webhooks.ts`, first, so a webhook URL is taken whole before a rule for a part of it;
 *   `providers.ts`, prefixed formats the preset lacks; `context.ts`, secrets known by their
 *   surroundings; `bare.ts`, keys and tokens with no name beside them.
 *
 * It runs on every final answer (up to 48 KB of transcript), so a rule whose pattern the
 * regex engine cannot skip through quickly names the places where a match can start
 * (`starts`): the occurrences of a rare character or a literal, found with `indexOf`
 * once per version of the text and shared between rules. The pattern then runs only
 * there, as a sticky copy, with the same result as a scan of the whole text.
 *
 * The gitleaks rules are a file: `loadRedaction` reads and compiles it, once. Start-up calls
 * it before serving, so a broken rule file stops start-up rather than a request; the first
 * redaction loads it when nothing has (a test, a bench, a CLI command). Importing this
 * module reads nothing.
 */
import { readFileSync } from 'node:fs';

import { AWS_CONTEXT, Anchors, DASH, FLAG_STEMS, UNDERSCORE, awsSecretStarts, before, isKeyWordInitial, keyWords, schemeStarts, separatorStarts, shared, skStarts, startsWithFolded } from './anchors.js';
import { bareBase64Finder, bareHexFinder, pemLineFinder, vendorTokenFinder } from './bare.js';
import { DSN_RULE, commandPasswordFinder, credentialValueFinder, curlUserFinder, prosePasswordFinder } from './context.js';
import { compileGitleaks, gitleaksFinders, type Gitleaks } from './gitleaks.js';
import { PROVIDER_RULES } from './providers.js';
import { MARKER_OPEN, PLACEHOLDER, isFinder, marker, type Finder, type Finding, type Match, type Rule, type SecretKind, type Step } from './rule.js';
import { rulesetFinder } from './ruleset.js';
import { WEBHOOK_RULES } from './webhooks.js';

export type { SecretKind } from './rule.js';

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

/** Engram's own rules that run before the ruleset: those that keep context, and the broader provider shapes. */
const SPECIFIC_RULES: readonly Rule[] = [
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
    // digit, hyphenated words ("sk-learn-style-...") do not. The look-ahead is bounded: run
    // at every `sk-` of a long `sk-sk-sk-…` line, an unbounded one took minutes per MB.
    kind: 'openai_key',
    pattern: /\bsk-(?=[A-Za-z_-]{0,200}\d)[A-Za-z0-9_-]{20,}/g,
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
];

/** Engram's own rules that run after the ruleset: AWS secrets by their name, assignments, flags. */
const GENERIC_RULES: readonly Rule[] = [
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
    // `key = value`, `key: value`, `"key": "value"`, the same JSON-escaped inside JSON (once,
    // or twice: `\\\"password\\\": \\\"…\\\"`, JSON in a JSON string in a tool call's
    // arguments), `key := value`. Only the value is replaced.
    kind: 'secret',
    pattern: new RegExp(
      `(${SECRET_KEY_WORD}(?![A-Za-z0-9_])\\\\{0,3}["'\`]?[ \\t]*(:=|=(?![=>])|:(?![:/]))[ \\t]*)` +
        `(?:"([^"\\n]{3,300})"|'([^'\\n]{3,300})'|(\\\\{1,3})"((?:[^"\\\\\\n]|\\\\[^"\\n]){3,300})\\5"|([^\\s"'\`,;&<>()[\\]{}\\\\]{3,}))`,
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
    // At a dash followed by (a dash and) the start of a flag name, not inside a word
    // (`admin-token (0600)` is a file name).
    starts: (t, a) =>
      a.of('-').filter((i) => {
        if (i > 0 && /[A-Za-z0-9_]/.test(t.charAt(i - 1))) return false;
        const name = t.charCodeAt(i + 1) === DASH ? i + 2 : i + 1;
        return isKeyWordInitial(t.charCodeAt(name)) && FLAG_STEMS.some((stem) => startsWithFolded(t, name, stem));
      }),
  },
];

function redactAssignment(m: Match): string {
  const [head = '', separator = '', dq, sq, escape, escaped, bare] = m.groups;
  const kind: SecretKind = /pass|pwd/i.test(head) ? 'password' : 'secret';
  if (bare !== undefined) {
    // Unquoted values are where code and prose live: `password: string`, `token = getToken()`,
    // `token = randomBytes(32)`, `token = match[1]`, `secretKey: Uint8Array)`, `type SetToken = Char | Set`.
    if (looksLikeCode(bare, head) || isCodeAfter(m, bare)) return m.text;
    if (separator === ':' && !looksRandomish(bare) && !standsAlone(m)) return m.text;
    return head + marker(kind);
  }
  const value = (dq ?? sq ?? escaped ?? '').trim();
  if (value === '' || PLACEHOLDER.test(value) || CODE_WORDS.has(value.toLowerCase())) return m.text;
  const quote = dq !== undefined ? '"' : sq !== undefined ? "'" : `${escape}"`;
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

/** What follows an unquoted value makes it code: a call, an index, a type in a signature or a union. */
function isCodeAfter(m: Match, value: string): boolean {
  const after = m.input.slice(m.offset + m.text.length, m.offset + m.text.length + 3);
  if (/^[([]/.test(after)) return true;
  // `A | B`, `a || b`, `a && b`; a query string's `&` follows a value directly.
  if (/^\s+[|&]|^\|\||^&&/.test(after)) return true;
  return /^[A-Z][A-Za-z0-9]*$/.test(value) && /^[),;>]/.test(after);
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

/** The order the steps run in (see this file's comment): specific before generic. */
function steps(gitleaks: Gitleaks): readonly Step[] {
  const { specific, generic } = gitleaksFinders(gitleaks);
  return [
    ...WEBHOOK_RULES,
    ...SPECIFIC_RULES,
    DSN_RULE,
    ...PROVIDER_RULES,
    rulesetFinder,
    specific,
    curlUserFinder,
    commandPasswordFinder,
    ...GENERIC_RULES,
    credentialValueFinder,
    prosePasswordFinder,
    generic,
    bareHexFinder,
    bareBase64Finder,
    pemLineFinder,
    vendorTokenFinder,
  ];
}

const RULES_FILE = new URL('./secret-rules/gitleaks/gitleaks.toml', import.meta.url);

/** The steps, compiled: set once, by `loadRedaction`. */
let loaded: readonly (CompiledRule | Finder)[] | undefined;

/** Reads the gitleaks rule file and compiles every step; later calls do nothing. */
export function loadRedaction(): void {
  compiledSteps();
}

function compiledSteps(): readonly (CompiledRule | Finder)[] {
  loaded ??= steps(compileGitleaks(readFileSync(RULES_FILE, 'utf8'))).map((step) =>
    isFinder(step) ? step : { ...step, sticky: new RegExp(step.pattern.source, step.pattern.flags.replace('g', 'y')) },
  );
  return loaded;
}

/**
 * Replaces secrets in `text` with `[REDACTED:<kind>]`: whatever secretlint's recommended
 * rules find, provider API keys in their older and looser shapes too, PEM private keys,
 * passwords and keys in URLs, bearer tokens, JWTs, Engram access tokens, passwords on
 * command lines and in prose, `password=` / `api_key:` style assignments, high-entropy
 * values beside credential words, and bare 256-bit hex or AWS-like keys. Ordinary prose,
 * code, hashes, UUIDs and tool output pass through unchanged. Idempotent.
 */
export function redactSecrets(text: string): string {
  const masked = maskEscapes(text);
  let out = masked;
  let anchors = new Anchors(out);
  for (const step of compiledSteps()) {
    let next: string;
    if (isFinder(step)) next = applyFindings(out, step.find(out, anchors), anchors);
    else next = step.starts ? replaceAt(step, out, step.starts(out, anchors)) : replaceAll(step, out);
    if (next !== out) anchors = new Anchors(next);
    out = next;
  }
  if (out === masked) return text;
  return masked === text ? out : unmaskEscapes(out);
}

/**
 * JSON-escaped text (tool arguments, transcript lines) glues the `n` of `\n` to the next
 * token: `\nglpat-…` has no word boundary before `glpat-`, and neither Engram's patterns
 * nor the ruleset's (`(?<!\p{L})`) would match. While redacting, the letter of `\n`,
 * `\r` and `\t` is replaced by a Unicode space of the same length (a line or paragraph
 * separator, a thin space: `\s` to the patterns), and put back after; text that already
 * holds one of those characters is redacted as it is.
 */
const ESCAPE_MASKS: Record<string, string> = { n: '\u2028', r: '\u2029', t: '\u2009' };
const ESCAPE_LETTERS: Record<string, string> = { '\u2028': 'n', '\u2029': 'r', '\u2009': 't' };

function maskEscapes(text: string): string {
  if (!text.includes('\\') || /[\u2028\u2029\u2009]/.test(text)) return text;
  return text.replace(/\\([nrt])/g, (_, letter: string) => `\\${ESCAPE_MASKS[letter]}`);
}

/** Puts the escapes back; one whose backslash a redaction took gets it back, so `\n` never becomes `n`. */
function unmaskEscapes(text: string): string {
  return text.replace(/\\?([\u2028\u2029\u2009])/g, (_, mask: string) => `\\${ESCAPE_LETTERS[mask]}`);
}

interface CompiledRule extends Rule {
  /** `pattern` made sticky, to try one start index at a time. */
  sticky: RegExp;
}

/**
 * `text` with each finding replaced by its marker. Overlapping findings are merged (named
 * by the first); a finding that touches an existing marker is dropped, since what it
 * covers was redacted already, and redacting a marker would break idempotence.
 */
function applyFindings(text: string, findings: Finding[], anchors: Anchors): string {
  if (findings.length === 0) return text;
  const markers = anchors.of(MARKER_OPEN);
  const byStart = findings.filter((f) => f.end > f.start).sort((a, b) => a.start - b.start || b.end - a.end);
  // One sweep over both ascending lists: markers that end before a finding are behind it for good.
  const sorted: Finding[] = [];
  let m = 0;
  for (const f of byStart) {
    while (m < markers.length && text.indexOf(']', markers[m]) + 1 <= f.start) m++;
    if (m < markers.length && markers[m] < f.end) continue;
    sorted.push(f);
  }
  let out = '';
  let copied = 0;
  let open: Finding | undefined;
  const close = () => {
    if (open) out += text.slice(copied, open.start) + marker(open.kind);
    if (open) copied = open.end;
  };
  for (const f of sorted) {
    if (open && f.start < open.end) open = { ...open, end: Math.max(open.end, f.end) };
    else {
      close();
      open = { ...f };
    }
  }
  close();
  return copied === 0 ? text : out + text.slice(copied);
}

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
