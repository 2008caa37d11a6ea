import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { estimateTokens, headAndTail, keywordQuery, normaliseText, oneLine, tail, truncateEnd, truncateMiddle, withoutNoiseLines } from '../../src/domain/text.js';

test('estimateTokens is chars / 4 rounded up', () => {
  assert.is(estimateTokens(''), 0);
  assert.is(estimateTokens('abcd'), 1);
  assert.is(estimateTokens('abcde'), 2);
});

test('oneLine and normaliseText', () => {
  assert.is(oneLine('  a\n\tb   c '), 'a b c');
  assert.is(normaliseText('  Ｆｕｌｌ-width   TEXT.\n'), 'full-width text');
});

test('truncateEnd cuts at a word boundary with an ellipsis', () => {
  assert.is(truncateEnd('short', 10), 'short');
  const cut = truncateEnd('the quick brown fox jumps over the lazy dog', 20);
  assert.ok(cut.length <= 20, cut);
  assert.is(cut, 'the quick brown fox…');
});

test('truncateEnd never splits a surrogate pair', () => {
  const cut = truncateEnd('ab😀😀😀😀', 4);
  assert.not.match(cut, /[\ud800-\udbff]…/);
});

test('truncateMiddle keeps head and tail and says how much was left out', () => {
  const text = 'HEAD' + 'x'.repeat(10_000) + 'TAIL';
  const cut = truncateMiddle(text, 200);
  assert.ok(cut.length <= 200, String(cut.length));
  assert.ok(cut.startsWith('HEAD'));
  assert.ok(cut.endsWith('TAIL'));
  assert.match(cut, /\[… \d+ characters omitted …\]/);
  assert.is(truncateMiddle('small', 200), 'small');
});

test('tail keeps the end', () => {
  assert.is(tail('abcdef', 3), 'def');
  assert.is(tail('abc', 10), 'abc');
});

test('keywordQuery keeps distinct content words, latest first', () => {
  assert.is(keywordQuery('Where is the deploy script? The DEPLOY script!'), 'script deploy');
  assert.is(keywordQuery('a b c', 5), '');
  assert.is(keywordQuery('one two three four', 2), 'four three');
});

test('keywordQuery can keep the earliest words instead', () => {
  assert.is(keywordQuery('one two three four', 2, 'earliest'), 'one two');
  assert.is(keywordQuery('Deploy the script, then restart the deploy', 32, 'earliest'), 'deploy script restart');
});

test('headAndTail keeps a short text whole, as the tail', () => {
  assert.equal(headAndTail('short text', 3, 7), { head: '', tail: 'short text' });
  assert.equal(headAndTail('0123456789', 3, 7), { head: '', tail: '0123456789' });
});

test('headAndTail keeps both ends of a long text, cut between words', () => {
  const text = 'Why does the build fail? ' + 'noise '.repeat(1_000) + 'Please fix it.';
  const { head, tail: end } = headAndTail(text, 100, 200);
  assert.ok(head.startsWith('Why does the build fail?'));
  assert.ok(end.endsWith('Please fix it.'));
  assert.ok(head.length <= 100 && head.length >= 76, String(head.length));
  assert.ok(end.length <= 200 && end.length >= 176, String(end.length));
  assert.match(head, /noise$/);
  assert.match(end, /^noise /);
});

test('headAndTail cuts inside a word with no whitespace near, never inside a surrogate pair', () => {
  const text = '😀'.repeat(100);
  const { head, tail: end } = headAndTail(text, 11, 11);
  assert.not.match(head, /[\ud800-\udbff]$/);
  assert.not.match(end, /^[\udc00-\udfff]/);
  assert.ok(head.length >= 10 && end.length >= 10);
});

test('withoutNoiseLines drops pasted stack frames and wordless lines, keeps the question; all-noise text is kept', () => {
  const pasted = [
    'Why does the checkout test fail?',
    'TypeError: Cannot read properties of undefined (reading "total")',
    '    at Cart.total (/app/src/cart.ts:41:17)',
    '    at Object.<anonymous> (/app/test/cart.test.ts:12:5)',
    '  File "/srv/app/jobs.py", line 88, in run',
    'main.go:42 +0x1d',
    '   0: 0x55d3c1a2b3c4 - std::panicking::begin_panic',
    '  12 |     let config = load();',
    '----------------',
    'It started after the upgrade.',
  ].join('\n');
  assert.is(
    withoutNoiseLines(pasted),
    ['Why does the checkout test fail?', 'TypeError: Cannot read properties of undefined (reading "total")', 'It started after the upgrade.'].join('\n'),
  );
  assert.is(withoutNoiseLines('    at a (/x.js:1:1)\n    at b (/y.js:2:2)'), '    at a (/x.js:1:1)\n    at b (/y.js:2:2)', 'nothing but noise: kept as it is');
  assert.is(withoutNoiseLines('plain question'), 'plain question');
});

test.run();
