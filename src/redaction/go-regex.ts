/**
 * Go's regular expressions (RE2 syntax, `regexp/syntax`) translated to JavaScript ones
 * with the same matches, for rules written for Go tools (gitleaks' rules, see
 * `gitleaks.ts`). The pattern is parsed into a small tree and written out again,
 * because the two dialects differ where a textual rewrite cannot see:
 *
 * - flags: Go sets `(?i)` anywhere, for the rest of the enclosing group, and scopes them
 *   (`(?i:…)`); Node 20 takes flags only for the whole pattern. So no JavaScript flag is
 *   used: case-insensitive parts are written with both cases (`k` as `[kK]`), `.` as `[^\n]`
 *   or, under `s`, `[\s\S]`; `m` and `U` are resolved the same way.
 * - escapes and classes: Go's `\s` is `[\t\n\f\r ]` and its `\d`, `\w`, `\b` are ASCII;
 *   `\z`, `\A`, `\Q…\E`, `\x{…}`, octal escapes and POSIX classes have no JavaScript
 *   spelling. Every class is written out as ranges; `{` is escaped when it is a literal.
 * - named groups (`(?P<name>…)`) become plain capture groups: numbering is what callers
 *   use, and Go accepts names JavaScript does not.
 *
 * What is not carried over: case folding beyond ASCII (Go's `(?i)k` also matches the
 * Kelvin sign) and Unicode classes (`\pL`), which are rejected; JavaScript (without `u`)
 * counts a character outside the Basic Multilingual Plane as two. Secrets are ASCII.
 */

/** A parsed pattern. Case-insensitivity is resolved at parse time into the chars and classes. */
export type GoRegexNode =
  | { type: 'alt'; branches: GoRegexNode[] }
  | { type: 'seq'; items: GoRegexNode[] }
  | { type: 'group'; capture: boolean; body: GoRegexNode }
  | { type: 'repeat'; body: GoRegexNode; min: number; max: number; lazy: boolean }
  | { type: 'char'; code: number; fold: boolean }
  /** Sorted, disjoint, inclusive code-unit ranges; `negated` inverts them. */
  | { type: 'class'; ranges: Array<[number, number]>; negated: boolean }
  | { type: 'assert'; kind: 'start' | 'end' | 'lineStart' | 'lineEnd' | 'wordBoundary' | 'notWordBoundary' };

export class GoRegexError extends Error {
  constructor(message: string, pattern: string, at: number) {
    super(`${message} at ${at} in ${JSON.stringify(pattern)}`);
    this.name = 'GoRegexError';
  }
}

interface Flags {
  /** Case-insensitive. */
  i: boolean;
  /** `^` and `$` at line breaks too. */
  m: boolean;
  /** `.` takes `\n` too. */
  s: boolean;
  /** Ungreedy: `x*` is lazy, `x*?` greedy. */
  U: boolean;
}

const MAX_CODE_UNIT = 0xffff;
type Ranges = Array<[number, number]>;

const DIGIT: Ranges = [[0x30, 0x39]];
const WORD: Ranges = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
/** Go's `\s`: `[\t\n\f\r ]`, no vertical tab and nothing beyond ASCII. */
const SPACE: Ranges = [
  [0x09, 0x0a],
  [0x0c, 0x0d],
  [0x20, 0x20],
];
const POSIX: Record<string, Ranges> = {
  alnum: [
    [0x30, 0x39],
    [0x41, 0x5a],
    [0x61, 0x7a],
  ],
  alpha: [
    [0x41, 0x5a],
    [0x61, 0x7a],
  ],
  ascii: [[0x00, 0x7f]],
  blank: [
    [0x09, 0x09],
    [0x20, 0x20],
  ],
  cntrl: [
    [0x00, 0x1f],
    [0x7f, 0x7f],
  ],
  digit: DIGIT,
  graph: [[0x21, 0x7e]],
  lower: [[0x61, 0x7a]],
  print: [[0x20, 0x7e]],
  punct: [
    [0x21, 0x2f],
    [0x3a, 0x40],
    [0x5b, 0x60],
    [0x7b, 0x7e],
  ],
  space: [
    [0x09, 0x0d],
    [0x20, 0x20],
  ],
  upper: [[0x41, 0x5a]],
  word: WORD,
  xdigit: [
    [0x30, 0x39],
    [0x41, 0x46],
    [0x61, 0x66],
  ],
};

const SIMPLE_ESCAPES: Record<string, number> = { a: 0x07, f: 0x0c, t: 0x09, n: 0x0a, r: 0x0d, v: 0x0b };
const CLASS_ESCAPES: Record<string, Ranges> = {
  d: DIGIT,
  D: complement(DIGIT),
  s: SPACE,
  S: complement(SPACE),
  w: WORD,
  W: complement(WORD),
};

type AssertKind = Extract<GoRegexNode, { type: 'assert' }>['kind'];
const ESCAPE_ASSERTS: Record<string, AssertKind> = { A: 'start', z: 'end', b: 'wordBoundary', B: 'notWordBoundary' };
const ASSERT_SOURCES: Record<AssertKind, string> = {
  start: '^',
  end: '$',
  lineStart: '(?<![^\\n])',
  lineEnd: '(?![^\\n])',
  wordBoundary: '\\b',
  notWordBoundary: '\\B',
};

/** Sorted and merged. */
function normalise(ranges: Ranges): Ranges {
  const sorted = ranges.filter(([lo, hi]) => lo <= hi).sort((a, b) => a[0] - b[0]);
  const out: Ranges = [];
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

function complement(ranges: Ranges): Ranges {
  const out: Ranges = [];
  let next = 0;
  for (const [lo, hi] of normalise(ranges)) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CODE_UNIT) out.push([next, MAX_CODE_UNIT]);
  return out;
}

/** The ranges with the other case of every ASCII letter in them added. */
function foldRanges(ranges: Ranges): Ranges {
  const out: Ranges = [...ranges];
  for (const [lo, hi] of ranges) {
    const fromLower: [number, number] = [Math.max(lo, 0x61), Math.min(hi, 0x7a)];
    if (fromLower[0] <= fromLower[1]) out.push([fromLower[0] - 0x20, fromLower[1] - 0x20]);
    const fromUpper: [number, number] = [Math.max(lo, 0x41), Math.min(hi, 0x5a)];
    if (fromUpper[0] <= fromUpper[1]) out.push([fromUpper[0] + 0x20, fromUpper[1] + 0x20]);
  }
  return normalise(out);
}

const isAsciiLetter = (c: number) => (c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a;

/** Parses `pattern`, Go's syntax with Perl flags (what `regexp.MustCompile` takes). */
export function parseGoRegex(pattern: string): GoRegexNode {
  let at = 0;
  const fail = (message: string): never => {
    throw new GoRegexError(message, pattern, at);
  };

  /** An alternation up to `)` or the end; `flags` may be changed by `(?i)` inside it, for the rest of it. */
  function alternation(outer: Flags): GoRegexNode {
    const flags = { ...outer };
    const branches: GoRegexNode[] = [];
    let items: GoRegexNode[] = [];
    while (at < pattern.length && pattern[at] !== ')') {
      if (pattern[at] === '|') {
        at++;
        branches.push({ type: 'seq', items });
        items = [];
        continue;
      }
      const atom = parseAtom(flags);
      if (atom === undefined) continue;
      items.push(parseRepeats(atom, flags));
    }
    branches.push({ type: 'seq', items });
    return branches.length === 1 ? branches[0] : { type: 'alt', branches };
  }

  function parseRepeats(atom: GoRegexNode, flags: Flags): GoRegexNode {
    let node = atom;
    for (;;) {
      const c = pattern[at];
      let min: number;
      let max: number;
      if (c === '*' || c === '+' || c === '?') {
        at++;
        [min, max] = c === '*' ? [0, Infinity] : c === '+' ? [1, Infinity] : [0, 1];
      } else if (c === '{') {
        const m = /^\{(\d+)(?:(,)(\d*))?\}/.exec(pattern.slice(at));
        if (!m) return node;
        at += m[0].length;
        min = Number(m[1]);
        max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
        if (min > 1000 || (max !== Infinity && max > 1000) || max < min) fail('invalid repeat count');
      } else {
        return node;
      }
      if (node.type === 'repeat') fail('invalid nested repetition operator');
      let lazy = false;
      if (pattern[at] === '?') {
        at++;
        lazy = true;
      }
      node = { type: 'repeat', body: node, min, max, lazy: lazy !== flags.U };
    }
  }

  /** One atom; `undefined` for a flag setting `(?i)`, which changes `flags` in place. */
  function parseAtom(flags: Flags): GoRegexNode | undefined {
    const c = pattern[at];
    switch (c) {
      case '(':
        return parseGroup(flags);
      case '[':
        return parseClass(flags);
      case '.':
        at++;
        return flags.s ? { type: 'class', ranges: [[0, MAX_CODE_UNIT]], negated: false } : { type: 'class', ranges: [[0x0a, 0x0a]], negated: true };
      case '^':
        at++;
        return { type: 'assert', kind: flags.m ? 'lineStart' : 'start' };
      case '$':
        at++;
        return { type: 'assert', kind: flags.m ? 'lineEnd' : 'end' };
      case '\\':
        return parseEscape(flags);
      case '*':
      case '+':
      case '?':
        return fail('missing argument to repetition operator');
      default:
        at++;
        return charNode(c.charCodeAt(0), flags);
    }
  }

  function charNode(code: number, flags: Flags): GoRegexNode {
    return { type: 'char', code, fold: flags.i && isAsciiLetter(code) };
  }

  function parseGroup(flags: Flags): GoRegexNode | undefined {
    at++; // (
    if (pattern[at] !== '?') return closeGroup(true, flags);
    const named = /^\?P?<([A-Za-z0-9_]+)>/.exec(pattern.slice(at));
    if (named) {
      at += named[0].length;
      return closeGroup(true, flags);
    }
    const flagged = /^\?([imsU]*)(?:-([imsU]*))?([:)])/.exec(pattern.slice(at));
    if (!flagged) return fail('invalid or unsupported group');
    at += flagged[0].length;
    const changed = { ...flags };
    for (const f of flagged[1]) changed[f as keyof Flags] = true;
    for (const f of flagged[2] ?? '') changed[f as keyof Flags] = false;
    if (flagged[3] === ')') {
      // `(?i)`: for the rest of the enclosing group.
      Object.assign(flags, changed);
      return undefined;
    }
    return closeGroup(false, changed);
  }

  function closeGroup(capture: boolean, flags: Flags): GoRegexNode {
    const body = alternation(flags);
    if (pattern[at] !== ')') fail('missing closing )');
    at++;
    return { type: 'group', capture, body };
  }

  function parseEscape(flags: Flags): GoRegexNode {
    at++; // backslash
    const c = pattern[at];
    if (c === undefined) return fail('trailing backslash');
    at++;
    if (Object.hasOwn(ESCAPE_ASSERTS, c)) return { type: 'assert', kind: ESCAPE_ASSERTS[c] };
    if (c === 'Q') {
      const end = pattern.indexOf('\\E', at);
      const literal = pattern.slice(at, end === -1 ? undefined : end);
      at = end === -1 ? pattern.length : end + 2;
      return { type: 'seq', items: [...literal].map((ch) => charNode(ch.charCodeAt(0), flags)) };
    }
    const ranges = classEscape(c);
    if (ranges) return { type: 'class', ranges, negated: false };
    return charNode(escapedChar(c), flags);
  }

  /** The ranges of `\d \D \s \S \w \W`, or undefined. */
  function classEscape(c: string): Ranges | undefined {
    if (c === 'p' || c === 'P') return fail('Unicode classes are not supported');
    return Object.hasOwn(CLASS_ESCAPES, c) ? CLASS_ESCAPES[c] : undefined;
  }

  /** The character an escape other than a class or an assertion stands for; `at` is past `c`. */
  function escapedChar(c: string): number {
    if (c in SIMPLE_ESCAPES) return SIMPLE_ESCAPES[c];
    if (c === 'x') {
      const braced = /^\{([0-9A-Fa-f]{1,6})\}/.exec(pattern.slice(at));
      const hex = braced ?? /^[0-9A-Fa-f]{2}/.exec(pattern.slice(at));
      if (!hex) return fail('invalid escape \\x');
      at += hex[0].length;
      const code = parseInt(braced ? braced[1] : hex[0], 16);
      return code > MAX_CODE_UNIT ? fail('characters beyond U+FFFF are not supported') : code;
    }
    if (c >= '0' && c <= '7') {
      // Go: `\0` to `\377` with up to three octal digits; `\1`-`\9` alone would be backreferences, which it rejects.
      const octal = /^[0-7]{0,2}/.exec(pattern.slice(at))?.[0] ?? '';
      if (c !== '0' && octal === '') return fail('backreferences are not supported');
      at += octal.length;
      return parseInt(c + octal, 8);
    }
    // Go takes any punctuation escaped; a letter or digit it does not know is an error.
    if (/[A-Za-z0-9]/.test(c)) return fail(`unknown escape \\${c}`);
    return c.charCodeAt(0);
  }

  function parseClass(flags: Flags): GoRegexNode {
    at++; // [
    let negated = false;
    if (pattern[at] === '^') {
      negated = true;
      at++;
    }
    const ranges: Ranges = [];
    let first = true;
    while (first || pattern[at] !== ']') {
      if (at >= pattern.length) fail('missing closing ]');
      first = false;
      const posix = /^\[:(\^?)([a-z]+):\]/.exec(pattern.slice(at));
      if (posix) {
        const set = POSIX[posix[2]] ?? fail(`unknown POSIX class ${posix[2]}`);
        ranges.push(...(posix[1] ? complement(set) : set));
        at += posix[0].length;
        continue;
      }
      if (pattern[at] === '\\') {
        const set = classEscape(pattern[at + 1] ?? '');
        if (set) {
          at += 2;
          ranges.push(...set);
          continue;
        }
      }
      const lo = classChar();
      if (pattern[at] === '-' && pattern[at + 1] !== ']' && at + 1 < pattern.length) {
        at++;
        const hi = classChar();
        if (hi < lo) fail('invalid character class range');
        ranges.push([lo, hi]);
      } else {
        ranges.push([lo, lo]);
      }
    }
    at++; // ]
    const set = flags.i ? foldRanges(ranges) : normalise(ranges);
    return { type: 'class', ranges: set, negated };
  }

  function classChar(): number {
    const c = pattern[at];
    if (c !== '\\') {
      at++;
      return c.charCodeAt(0);
    }
    at += 2;
    const escaped = pattern[at - 1];
    if (escaped === undefined) return fail('trailing backslash');
    if (Object.hasOwn(ESCAPE_ASSERTS, escaped) || escaped === 'Q') return fail(`\\${escaped} in a class`);
    return escapedChar(escaped);
  }

  const root = alternation({ i: false, m: false, s: false, U: false });
  if (at < pattern.length) fail('unexpected )');
  return root;
}

/** `c` as it stands in JavaScript source, outside (`inClass` false) or inside a class. */
function literal(c: number, inClass: boolean): string {
  const ch = String.fromCharCode(c);
  if (/[A-Za-z0-9_ ]/.test(ch)) return ch;
  if (c > 0x20 && c < 0x7f) {
    const special = inClass ? '\\]^-[' : '\\^$.|?*+()[]{}/';
    return special.includes(ch) ? `\\${ch}` : ch;
  }
  return c <= 0xff ? `\\x${c.toString(16).padStart(2, '0')}` : `\\u${c.toString(16).padStart(4, '0')}`;
}

function classSource(ranges: Ranges, negated: boolean): string {
  if (ranges.length === 1 && ranges[0][0] === 0 && ranges[0][1] === MAX_CODE_UNIT) return negated ? '[]' : '[\\s\\S]';
  const body = ranges.map(([lo, hi]) => (lo === hi ? literal(lo, true) : hi === lo + 1 ? literal(lo, true) + literal(hi, true) : `${literal(lo, true)}-${literal(hi, true)}`));
  return `[${negated ? '^' : ''}${body.join('')}]`;
}

/** JavaScript source for `node`, to compile without flags (or with `g`, `y`, `d`). */
export function toJavaScript(node: GoRegexNode): string {
  switch (node.type) {
    case 'alt':
      return node.branches.map(toJavaScript).join('|');
    case 'seq':
      return node.items.map((item) => (item.type === 'alt' ? `(?:${toJavaScript(item)})` : toJavaScript(item))).join('');
    case 'group':
      return `(${node.capture ? '' : '?:'}${toJavaScript(node.body)})`;
    case 'repeat': {
      const body = toJavaScript(node.body);
      const atom = isAtom(node.body) ? body : `(?:${body})`;
      const { min, max } = node;
      const quantifier =
        min === 0 && max === Infinity ? '*' : min === 1 && max === Infinity ? '+' : min === 0 && max === 1 ? '?' : max === Infinity ? `{${min},}` : min === max ? `{${min}}` : `{${min},${max}}`;
      return atom + quantifier + (node.lazy ? '?' : '');
    }
    case 'char':
      return node.fold ? `[${String.fromCharCode(node.code | 0x20).toUpperCase()}${String.fromCharCode(node.code | 0x20)}]` : literal(node.code, false);
    case 'class':
      return classSource(node.ranges, node.negated);
    case 'assert':
      return ASSERT_SOURCES[node.kind];
  }
}

/** Whether `node` is written as one JavaScript atom, which a quantifier can follow directly. */
function isAtom(node: GoRegexNode): boolean {
  return node.type === 'char' || node.type === 'class' || node.type === 'group';
}

/** The number of capture groups, which JavaScript numbers as Go does (left parenthesis order). */
export function captureCount(node: GoRegexNode): number {
  switch (node.type) {
    case 'alt':
      return node.branches.reduce((n, b) => n + captureCount(b), 0);
    case 'seq':
      return node.items.reduce((n, b) => n + captureCount(b), 0);
    case 'group':
      return (node.capture ? 1 : 0) + captureCount(node.body);
    case 'repeat':
      return captureCount(node.body);
    default:
      return 0;
  }
}

/** A JavaScript RegExp with the matches of Go's `pattern`; `flags` may hold `g`, `y`, `d` (not `i`, `m`, `s`, `u`). */
export function goRegExp(pattern: string, flags = ''): RegExp {
  if (/[imsuv]/.test(flags)) throw new Error(`flag ${flags} would change the translation`);
  return new RegExp(toJavaScript(parseGoRegex(pattern)), flags);
}
