/**
 * The translation of Go's regular expressions (RE2 syntax) to JavaScript: each case is
 * what Go's `regexp` package answers for the pattern and the text, written down from its
 * documentation (`regexp/syntax`), where the two dialects differ or JavaScript has no
 * spelling.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { GoRegexError, captureCount, goRegExp, parseGoRegex } from '../../src/redaction/go-regex.js';

/** The first match of Go's `pattern` in `text`, as Go's `FindString` would give it, or null. */
const find = (pattern: string, text: string): string | null => goRegExp(pattern).exec(text)?.[0] ?? null;

const cases: Array<[string, string, string, string | null]> = [
  // Flags: for the whole pattern, from the middle of a group to its end, scoped, and off again.
  ['(?i) on the whole pattern', '(?i)abc', 'xABCx', 'ABC'],
  ['(?i) from the middle on', 'a(?i)b', 'AB aB', 'aB'],
  ['(?i) ends with its group', '(?:a(?i)b)c', 'aBC aBc', 'aBc'],
  ['(?i) reaches the next alternative of its group', '(?:x(?i)y|z)', 'Z', 'Z'],
  ['(?-i:…) inside (?i)', '(?i)a(?-i:b)c', 'ABC AbC', 'AbC'],
  ['(?i:…) scoped', 'a(?i:b)c', 'aBC aBc', 'aBc'],
  ['(?i) on a class', '(?i)[a-c]+', 'xAbCx', 'AbC'],
  ['(?i) on a negated class folds first', '(?i)[^a-c]+', 'ABCdE', 'dE'],
  ['case-sensitive by default', '[a-c]+', 'ABCabc', 'abc'],
  ['(?U) swaps greedy and lazy', '(?U)a+', 'aaa', 'a'],
  ['(?U) with ? is greedy', '(?U)a+?', 'aaa', 'aaa'],
  // `.` and `\s` are Go's, not JavaScript's.
  ['. takes \\r and U+2028 but not \\n', 'a.b', 'a\nb a\rb', 'a\rb'],
  ['. takes U+2028', 'a.b', 'a\u2028b', 'a\u2028b'],
  ['(?s:.) takes \\n', 'a(?s:.)b', 'a\nb', 'a\nb'],
  ['\\s takes \\f', 'a\\sb', 'a\fb', 'a\fb'],
  ['\\s does not take \\v', 'a\\sb', 'a\vb', null],
  ['\\s does not take U+2028', 'a\\sb', 'a\u2028b', null],
  ['\\s does not take a no-break space', 'a\\sb', 'a\u00a0b', null],
  ['\\S takes a no-break space', 'a\\Sb', 'a\u00a0b', 'a\u00a0b'],
  ['\\w is ASCII', '\\w+', 'é_a1', '_a1'],
  ['\\b is ASCII', '\\bx', 'éx', 'x'],
  // Anchors.
  ['$ is the end of the text, not before a final line break', 'a$', 'a\n', null],
  ['\\z is the end of the text', 'a\\z', 'ba', 'a'],
  ['\\A is the start of the text', '\\Ab', 'a\nb', null],
  ['(?m)^ and $ at line breaks', '(?m)^b$', 'a\nb\nc', 'b'],
  // Escapes JavaScript spells otherwise, or not at all.
  ['\\x60', '\\x60x\\x60', 'a`x`b', '`x`'],
  ['\\x{…}', '\\x{41}', 'zA', 'A'],
  ['octal', '\\101\\0', 'A\u0000', 'A\u0000'],
  ['\\Q…\\E', '\\Q.*+\\E', 'a.*+b', '.*+'],
  ['escaped punctuation', '\\#\\%\\-', '#%-', '#%-'],
  ['POSIX class', '[[:alpha:]]+', '12ab3', 'ab'],
  ['negated POSIX class', '[[:^digit:]]+', '12ab3', 'ab'],
  ['a class escape in a class', '[^\\S\\n]+', 'a \t\nb', ' \t'],
  ['] first in a class is literal', '[]a]+', 'x]a]', ']a]'],
  ['- last in a class is literal', '[\\w.-]+', ' a.b-c ', 'a.b-c'],
  // Repetition: `{` that starts none is a literal.
  ['{n,}', 'a{2,}', 'a aaa', 'aaa'],
  ['{,n} is a literal', 'a{,2}', 'a{,2}', 'a{,2}'],
  ['{ alone is a literal', '\\${(?:[A-Z_]+)}', '${HOME}', '${HOME}'],
  ['lazy {n,m}?', 'a{1,3}?', 'aaa', 'a'],
];

for (const [name, pattern, text, expected] of cases) {
  test(`Go regex: ${name}`, () => {
    assert.is(find(pattern, text), expected, `${pattern} on ${JSON.stringify(text)}`);
  });
}

test('Go regex: named groups count and number as Go numbers them', () => {
  const m = goRegExp('(?P<a>x)(y)(?:z)(?<b>w)').exec('xyzw');
  assert.equal(m && [...m], ['xyzw', 'x', 'y', 'w']);
  assert.is(captureCount(parseGoRegex('(?P<a>x)(y)(?:z)(?<b>w)')), 3);
});

test('Go regex: what has no faithful translation is refused, not guessed', () => {
  for (const pattern of ['\\pL', '\\p{Greek}', '(a)\\1', '\\x{1F600}', '(?=a)', 'a**', '(a', 'a)', '[a', '\\C']) {
    assert.throws(() => goRegExp(pattern), (error: unknown) => error instanceof GoRegexError, pattern);
  }
});

test('Go regex: flags that would change the translation are refused', () => {
  assert.throws(() => goRegExp('a', 'gi'));
  assert.ok(goRegExp('a', 'gdy').sticky);
});

test.run();
