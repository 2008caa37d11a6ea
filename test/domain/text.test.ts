import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { estimateTokens, keywordQuery, normaliseText, oneLine, tail, truncateEnd, truncateMiddle } from '../../src/domain/text.js';

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

test.run();
