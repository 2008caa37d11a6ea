/**
 * The maintained ruleset: secretlint's recommended preset
 * (`@secretlint/secretlint-rule-preset-recommend`, MIT, no dependencies). Its rules are
 * code, not data: each is a `SecretLintRuleCreator` whose `create(context)` returns a
 * `file(source)` handler that reports ranges through `context.report`. That is secretlint's
 * documented rule API (`@secretlint/types`); Engram drives it directly and synchronously,
 * since `@secretlint/core` only offers an async lint of a whole file and redaction runs
 * inside synchronous code (the extraction job builder, the reflection validator).
 *
 * What Engram adds on top of a rule's report:
 * - the range grows to the whole token it falls in: some rules report part of a
 *   secret (Slack's `xapp-` rule stops before the last segment; the AWS rule reports the
 *   key name's offset with the value's length), and half a secret is still a secret;
 * - filter rules (`secretlint-disable` comments) are not run, and `ignore` requests are
 *   dropped: text an agent reads must not be able to switch redaction off;
 * - no source path is given, so the rules that look at files (a `.p12`, `package.json`,
 *   `.npmrc`) never read one: this module does no I/O.
 */
import { rules as presetRules } from '@secretlint/secretlint-rule-preset-recommend';
import type { SecretLintRuleContext, SecretLintRuleCreator, SecretLintSourceCode } from '@secretlint/types';
import type { Finder, Finding } from './rule.js';

/** Marker names for rules whose id does not make one (`[a-z_]+`). */
const KIND_NAMES: Record<string, string> = { '1password': 'onepassword' };

const PREFIX = '@secretlint/secretlint-rule-';

/** `@secretlint/secretlint-rule-database-connection-string` is marked `database_connection_string`. */
export function rulesetKind(id: string): string {
  const name = id.startsWith(PREFIX) ? id.slice(PREFIX.length) : id;
  return KIND_NAMES[name] ?? name.toLowerCase().replace(/[^a-z]+/g, '_').replace(/^_+|_+$/g, '');
}

interface Scanner {
  id: string;
  kind: string;
  creator: SecretLintRuleCreator;
}

/**
 * The preset's scanning rules, loaded once. `filter-comments` calls itself a scanner but
 * only ever asks to ignore ranges (`secretlint-disable`), which Engram does not honour.
 */
const IGNORE_ONLY = new Set([`${PREFIX}filter-comments`]);
export const RULESET: readonly Scanner[] = (presetRules as unknown as SecretLintRuleCreator[])
  .filter((creator) => creator.meta.type === 'scanner' && !IGNORE_ONLY.has(creator.meta.id))
  .map((creator) => ({ id: creator.meta.id, kind: rulesetKind(creator.meta.id), creator }));

/**
 * Characters a reported range is grown over, to reach both ends of its token: letters,
 * digits, `_ - + /`, and at the end base64's `=` padding (not at the start, where `=`
 * ends the name of a variable that holds the secret).
 */
const isTokenChar = (c: number): boolean =>
  (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a) || c === 0x5f || c === 0x2d || c === 0x2b || c === 0x2f;
const EQUALS = 0x3d;

const unsupported = (): never => {
  throw new Error('redaction gives the ruleset no positions');
};

/** What the rules read of a text: its content, never a file. */
function sourceOf(content: string): SecretLintSourceCode {
  return {
    hasBOM: false,
    content,
    filePath: undefined,
    physicalFilePath: undefined,
    contentType: 'text',
    ext: '',
    getFilePath: () => undefined,
    getPhysicalFilePath: () => undefined,
    locationToRange: unsupported,
    rangeToLocation: unsupported,
    positionToIndex: unsupported,
    indexToPosition: unsupported,
  };
}

/** The text being scanned and what the rules reported in it; set only during `rulesetFindings`. */
let scanning: { text: string; found: Finding[] } | undefined;

/**
 * Each rule's `file` handler, created once: a rule keeps nothing between the texts it
 * scans, and creating twenty rules per redacted text cost more than scanning a short one.
 * Reports go to the scan under way.
 */
const HANDLERS = RULESET.map(({ id, kind, creator }) => {
  const context: SecretLintRuleContext = {
    sharedOptions: {},
    // The translated message would hold the secret; only its id is kept.
    createTranslator: () => (messageId) => ({ message: String(messageId), messageId: String(messageId), data: undefined }),
    report: ({ range: [start, end] }) => {
      if (scanning) scanning.found.push(grow(scanning.text, start, end, kind));
    },
    ignore: () => undefined,
  };
  return { id, file: creator.create(context, {}).file };
});

/**
 * Every span the ruleset reports in `text`, grown to whole tokens. A rule whose handler
 * returns a promise (none in the preset does for text without a path) is counted in
 * `asyncRules`: its later reports are lost, so a test fails if an upgrade brings one.
 */
export function rulesetFindings(text: string, asyncRules?: Set<string>): Finding[] {
  const found: Finding[] = [];
  const source = sourceOf(text);
  const outer = scanning;
  scanning = { text, found };
  try {
    for (const { id, file } of HANDLERS) {
      const result = file?.(source);
      if (result !== undefined) {
        asyncRules?.add(id);
        result.catch(() => undefined);
      }
    }
  } finally {
    scanning = outer;
  }
  return found;
}

/** The range grown to whole tokens at both ends; a URL (the basic-auth rule's) is left as reported. */
function grow(text: string, start: number, end: number, kind: string): Finding {
  const span = text.slice(start, end);
  if (span.includes('://')) return { start, end, kind };
  let from = start;
  while (from > 0 && isTokenChar(text.charCodeAt(from - 1))) from--;
  let to = end;
  while (to < text.length && (isTokenChar(text.charCodeAt(to)) || text.charCodeAt(to) === EQUALS)) to++;
  return { start: from, end: to, kind };
}

export const rulesetFinder: Finder = { name: 'ruleset', find: (text) => rulesetFindings(text) };
