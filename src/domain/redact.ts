/**
 * Secret redaction for text that leaves the request path: transcripts sent to extraction
 * and reflections before they are stored. Each rule is one precompiled regular expression
 * applied in one pass; a match becomes `[REDACTED:<kind>]`. Rules run from the most
 * specific (a PEM block, a provider's key format) to the most generic (`password=...`), so
 * a key inside an assignment is named by its provider, and every rule leaves an existing
 * `[REDACTED:...]` marker alone, which makes redaction idempotent.
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
  pattern: RegExp;
  /** Builds the replacement; by default the whole match becomes the marker. */
  replace?: (match: Match) => string;
}

const RULES: readonly Rule[] = [
  {
    // The whole block, headers included. A block cut off before its END line (a truncated
    // tool output) is redacted up to where its base64 body stops. The bound keeps one
    // BEGIN from swallowing the rest of a long transcript (a 4096-bit key is ~3.3 kB).
    kind: 'private_key',
    pattern:
      /-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]{0,12000}?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s\\:,-]*)/g,
  },
  {
    // scheme://user:PASSWORD@host keeps the user and the host, which say where things are.
    // The user may be empty (`redis://:PASSWORD@cache`).
    kind: 'url_password',
    pattern: /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/?#@'"`[\]]*:)(?![$<{%*]|\[REDACTED)[^\s/?#@'"`]+@/gi,
    replace: (m) => `${m.groups[0]}${marker('url_password')}@`,
  },
  {
    kind: 'bearer_token',
    pattern: /\b(authorization["']?\s*[:=]\s*["']?(?:bearer|basic|token|digest)\s+)(?![$<{]|\[REDACTED)[^\s"'`,;]{8,}/gi,
    replace: (m) => m.groups[0] + marker('bearer_token'),
  },
  {
    // A long bearer credential outside a header line; it must hold a digit so prose
    // ("bearer authentication-required") stays.
    kind: 'bearer_token',
    pattern: /\b(bearer\s+)(?![$<{]|\[REDACTED)(?=[A-Za-z._~+/=-]*\d)[A-Za-z0-9._~+/=-]{20,}/gi,
    replace: (m) => m.groups[0] + marker('bearer_token'),
  },
  { kind: 'anthropic_key', pattern: /\bsk-ant-[A-Za-z0-9_-]{20,}/g },
  {
    // sk-..., sk-proj-..., sk-svcacct-..., OpenRouter's sk-or-v1-...; random keys hold a
    // digit, hyphenated words ("sk-learn-style-...") do not.
    kind: 'openai_key',
    pattern: /\bsk-(?=[A-Za-z_-]*\d)[A-Za-z0-9_-]{20,}/g,
  },
  { kind: 'github_token', pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})/g },
  { kind: 'aws_access_key_id', pattern: /\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b/g },
  { kind: 'slack_token', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g },
  { kind: 'slack_webhook', pattern: /\bhttps:\/\/hooks\.slack\.com\/(?:services|workflows)\/[A-Za-z0-9/_-]+/g },
  { kind: 'google_api_key', pattern: /\bAIza[0-9A-Za-z_-]{35}/g },
  { kind: 'stripe_key', pattern: /\b(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9+/=]{24,})/g },
  { kind: 'jwt', pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g },
  { kind: 'engram_token', pattern: /\begm_[A-Za-z0-9_-]{20,}/g },
  {
    kind: 'aws_secret_key',
    pattern: /\b((?:aws_?)?secret_?access_?key["']?\s*[:=]\s*["']?)[A-Za-z0-9/+=]{30,}/gi,
    replace: (m) => m.groups[0] + marker('aws_secret_key'),
  },
  {
    // A bare 40-character base64 string is an AWS secret only near "aws" or "secret"; git
    // hashes (hex) and identifiers (one case, or no digit or symbol) are left alone.
    kind: 'aws_secret_key',
    pattern: /(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/g,
    replace: (m) => {
      const before = m.input.slice(Math.max(0, m.offset - 80), m.offset);
      const random = /[a-z]/.test(m.text) && /[A-Z]/.test(m.text) && /[0-9/+]/.test(m.text);
      return random && /aws|secret/i.test(before) ? marker('aws_secret_key') : m.text;
    },
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
  for (const rule of RULES) {
    const replace = rule.replace;
    if (!replace) {
      out = out.replace(rule.pattern, marker(rule.kind));
      continue;
    }
    out = out.replace(rule.pattern, (...args: unknown[]) => {
      // String.replace passes (match, ...groups, offset, input); no rule uses named groups.
      const input = args[args.length - 1] as string;
      const offset = args[args.length - 2] as number;
      const groups = args.slice(1, -2) as (string | undefined)[];
      return replace({ text: args[0] as string, groups, offset, input });
    });
  }
  return out;
}
