/**
 * What the shape of a gitleaks rule's pattern tells `gitleaks.ts` about where its
 * matches can start, so that a pattern written for Go's linear engine is not tried at
 * every character by JavaScript's backtracking one: the optional run it starts with, the
 * literal before a gap to the end of the line, the keywords every match starts with.
 */
import { toJavaScript, type GoRegexNode } from './go-regex.js';

const NEWLINE = 0x0a;

/** The optional run a rule's pattern started with, for finding the start of a match again. */
export interface Prefix {
  chars: Uint8Array;
  max: number;
}

/**
 * `node` without the optional runs of characters it starts with (`[\w.-]{0,50}?`, also
 * at the start of a leading group without alternatives, and in each alternative of the
 * whole pattern), and those runs. Only lazy runs: a greedy one would make the match use
 * the last keyword in reach, not the first.
 */
export function withoutOptionalPrefix(node: GoRegexNode): { node: GoRegexNode; stripped: GoRegexNode[] } {
  if (node.type === 'alt') {
    const branches = node.branches.map(withoutOptionalPrefix);
    return { node: { type: 'alt', branches: branches.map((b) => b.node) }, stripped: branches.flatMap((b) => b.stripped) };
  }
  if (node.type !== 'seq') return { node, stripped: [] };
  const items = [...node.items];
  const stripped: GoRegexNode[] = [];
  while (items.length > 1) {
    const first = items[0];
    if (first.type === 'repeat' && first.min === 0 && first.lazy && first.body.type === 'class') {
      stripped.push(first);
      items.shift();
    } else if (first.type === 'group' && !first.capture && first.body.type === 'seq') {
      const inner = withoutOptionalPrefix(first.body);
      if (inner.stripped.length === 0) break;
      stripped.push(...inner.stripped);
      items[0] = { ...first, body: inner.node };
      break;
    } else {
      break;
    }
  }
  return { node: { type: 'seq', items }, stripped };
}

/** The characters and the most of them that the stripped runs together take. */
export function prefixOf(stripped: GoRegexNode[]): Prefix | undefined {
  if (stripped.length === 0) return undefined;
  const chars = new Uint8Array(128);
  let max = 0;
  for (const run of stripped) {
    if (run.type !== 'repeat' || run.body.type !== 'class') continue;
    max += run.max;
    for (let c = 0; c < 128; c++) {
      const inRanges = run.body.ranges.some(([lo, hi]) => c >= lo && c <= hi);
      if (inRanges !== run.body.negated) chars[c] = 1;
    }
  }
  return { chars, max };
}

/**
 * The literal a pattern starts with when a gap of any characters on the line follows it
 * (gitleaks' curl rules: `\bcurl\b(?:.*?|.*?(?:[\r\n]{1,2}.*?){1,5})[ \t\n\r](?:-H|…)…`).
 * A backtracking engine tries such a pattern at every `curl` of a line, each time to the
 * end of the line: quadratic in a long line of them (minutes per MB), where Go's engine is
 * linear. What follows the gap does not depend on where the pattern started, and a later
 * start on the same line reaches less of the line, so once the pattern fails at one
 * start it fails at every later one on that line: those are skipped.
 */
export function lineGapLiteral(node: GoRegexNode): { literal: string; head: GoRegexNode } | undefined {
  if (node.type !== 'seq') return undefined;
  let literal = '';
  let i = 0;
  if (node.items[i]?.type === 'assert') i++;
  for (let item = node.items[i]; item?.type === 'char' && !item.fold; item = node.items[++i]) literal += String.fromCharCode(item.code);
  if (node.items[i]?.type === 'assert') i++;
  const gap = node.items[i];
  if (literal.length < 2 || gap?.type !== 'group' || gap.capture) return undefined;
  const branches = gap.body.type === 'alt' ? gap.body.branches : [gap.body];
  const startsWithLineRun = (branch: GoRegexNode) => {
    const first = branch.type === 'seq' ? branch.items[0] : branch;
    return (
      first?.type === 'repeat' &&
      first.min === 0 &&
      first.max === Infinity &&
      first.body.type === 'class' &&
      first.body.negated &&
      first.body.ranges.length === 1 &&
      first.body.ranges[0][0] === NEWLINE &&
      first.body.ranges[0][1] === NEWLINE
    );
  };
  return branches.every(startsWithLineRun) ? { literal, head: { type: 'seq', items: node.items.slice(0, i) } } : undefined;
}

export function lineGap(node: GoRegexNode): { lineLiteral?: string; lineHead?: RegExp } {
  const gap = lineGapLiteral(node);
  return gap ? { lineLiteral: gap.literal, lineHead: new RegExp(toJavaScript(gap.head), 'y') } : {};
}

/** At most this many strings are followed through a pattern's alternatives. */
const MAX_LITERALS = 64;

const cross = (a: string[], b: string[]): string[] | undefined => (a.length * b.length > MAX_LITERALS ? undefined : a.flatMap((x) => b.map((y) => x + y)));

/** The strings `of` gives for every branch, or undefined when a branch has none, or when they are more than `max`. */
function union(branches: GoRegexNode[], of: (node: GoRegexNode) => string[] | undefined, max = Infinity): string[] | undefined {
  const all: string[] = [];
  for (const branch of branches) {
    const strings = of(branch);
    if (strings === undefined || all.length + strings.length > max) return undefined;
    all.push(...strings);
  }
  return all;
}

/** Every string `node` matches, lower-cased, when they are few and fixed (`(?:sk|rk)_`); else undefined. */
function exactStrings(node: GoRegexNode): string[] | undefined {
  switch (node.type) {
    case 'char':
      return [String.fromCharCode(node.code).toLowerCase()];
    case 'class': {
      if (node.negated) return undefined;
      const chars = new Set<string>();
      for (const [lo, hi] of node.ranges) {
        if (hi - lo > 1) return undefined;
        for (let c = lo; c <= hi; c++) chars.add(String.fromCharCode(c).toLowerCase());
      }
      return chars.size === 1 ? [...chars] : undefined;
    }
    case 'assert':
      return [''];
    case 'group':
      return exactStrings(node.body);
    case 'alt':
      return union(node.branches, exactStrings, MAX_LITERALS);
    case 'seq': {
      let all: string[] | undefined = [''];
      for (const item of node.items) {
        const strings = exactStrings(item);
        all = strings && cross(all, strings);
        if (all === undefined) return undefined;
      }
      return all;
    }
    case 'repeat': {
      // A fixed count, or a few (`passw(?:or)?d` is `passwd` or `password`).
      if (node.max > 8) return undefined;
      const body = exactStrings(node.body);
      if (body === undefined) return undefined;
      const all: string[] = [];
      let run: string[] | undefined = [''];
      for (let count = 0; count <= node.max && run; count++) {
        if (count >= node.min) all.push(...run);
        if (all.length > MAX_LITERALS) return undefined;
        if (count < node.max) run = cross(run, body);
      }
      return run ? all : undefined;
    }
  }
}

/** Strings, lower-cased, one of which every match of `node` starts with; undefined if that is not known. */
export function leadingStrings(node: GoRegexNode): string[] | undefined {
  switch (node.type) {
    case 'group':
      return leadingStrings(node.body);
    case 'alt':
      return union(node.branches, leadingStrings);
    case 'repeat':
      return node.min >= 1 ? leadingStrings(node.body) : undefined;
    case 'seq': {
      let all: string[] = [''];
      for (const item of node.items) {
        const exact = exactStrings(item);
        const next = exact ? cross(all, exact) : undefined;
        if (next) {
          all = next;
          continue;
        }
        const leading = leadingStrings(item);
        all = (leading && cross(all, leading)) ?? all;
        break;
      }
      return all.every((s) => s !== '') ? all : undefined;
    }
    default: {
      const exact = exactStrings(node);
      return exact?.every((s) => s !== '') ? exact : undefined;
    }
  }
}

/**
 * The rule's keywords one of which every match of `node` starts with (`generic-api-key`
 * starts with `access`, `auth`, `api`, …, all keywords), or undefined. Such a rule is
 * tried only where those keywords start, as a sticky pattern, with the matches a scan of
 * the whole text would find: a pattern that starts with an alternative of words in both
 * cases cannot be skipped through quickly (2.5 ms per 48 KB for `generic-api-key`).
 */
export function startKeywords(node: GoRegexNode, keywords: readonly string[], index: (word: string) => number): number[] | undefined {
  const leading = leadingStrings(node);
  if (leading === undefined || keywords.length === 0) return undefined;
  const used = new Set<number>();
  for (const start of leading) {
    const keyword = keywords.find((word) => start.startsWith(word.toLowerCase()));
    if (keyword === undefined) return undefined;
    used.add(index(keyword));
  }
  return [...used].sort((a, b) => a - b);
}
