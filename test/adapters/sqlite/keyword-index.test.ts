import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BM25_B, BM25_K1, KeywordIndex } from '../../../src/adapters/sqlite/keyword-index.js';

const test = suite('KeywordIndex (in-memory BM25)');

const byKey = (list: { key: number; score: number }[]): { key: number; score: number }[] =>
  [...list].sort((a, b) => a.key - b.key);

test('scores are BM25 with k1 1.2, b 0.75 and IDF ln(1 + (N - n + 0.5) / (n + 0.5))', () => {
  const index = new KeywordIndex();
  index.put(1, 0, 'deploy deploy staging');
  index.put(2, 0, 'deploy to production with the pipeline');
  index.put(3, 0, 'lunch at noon');
  // Lengths count keyword terms: stems of content words ("to", "with", "the", "at" are not terms).
  const average = (3 + 3 + 2) / 3;
  const idf = (n: number): number => Math.log(1 + (3 - n + 0.5) / (n + 0.5));
  const term = (tf: number, length: number, n: number): number =>
    (idf(n) * tf * (BM25_K1 + 1)) / (tf + BM25_K1 * (1 - BM25_B + (BM25_B * length) / average));
  const results = byKey(index.search(['deploy', 'stage'], 10));
  assert.equal(results.map((r) => r.key), [1, 2]);
  assert.ok(Math.abs(results[0].score - (term(2, 3, 2) + term(1, 3, 1))) < 1e-12);
  assert.ok(Math.abs(results[1].score - term(1, 3, 2)) < 1e-12);
  assert.equal(index.search(['absent'], 10), []);
  assert.equal(index.search([], 10), []);
  assert.is(index.documentFrequency('deploy'), 2);
  assert.is(index.count, 3);
});

test('put replaces a document, remove forgets it; statistics follow', () => {
  const index = new KeywordIndex();
  index.put(1, 0, 'alpha beta');
  index.put(2, 0, 'alpha');
  index.put(1, 0, 'gamma');
  assert.is(index.documentFrequency('alpha'), 1);
  assert.is(index.documentFrequency('beta'), 0);
  assert.equal(index.search(['alpha', 'beta'], 10).map((r) => r.key), [2]);
  index.remove(2);
  index.remove(2);
  assert.equal(index.search(['alpha'], 10), []);
  assert.is(index.count, 1);
  index.put(3, 0, 'alpha gamma'); // reuses the freed slot
  assert.equal(byKey(index.search(['gamma'], 10)).map((r) => r.key), [1, 3]);
  // The same scores as an index built from scratch with the same documents.
  const fresh = new KeywordIndex();
  fresh.put(1, 0, 'gamma');
  fresh.put(3, 0, 'alpha gamma');
  assert.equal(byKey(index.search(['alpha', 'gamma'], 10)), byKey(fresh.search(['alpha', 'gamma'], 10)));
});

test('limit keeps the best; equal scores keep the lower seq; kinds filter', () => {
  const index = new KeywordIndex();
  for (let seq = 10; seq >= 1; seq--) index.put(seq, seq % 2, seq === 7 ? 'word word' : 'word');
  const best = byKey(index.search(['word'], 3));
  assert.equal(best.map((r) => r.key), [1, 2, 7]);
  assert.equal(byKey(index.search(['word'], 3, 0)).map((r) => r.key), [2, 4, 6]);
  index.setKind(2, 1);
  assert.equal(byKey(index.search(['word'], 3, 0)).map((r) => r.key), [4, 6, 8]);
  assert.equal(index.search(['word'], 0), []);
});

test('grows past its first allocations (many documents and words)', () => {
  const index = new KeywordIndex();
  for (let seq = 1; seq <= 500; seq++) index.put(seq, 0, `common w${seq} ${'filler '.repeat(seq % 7)}`);
  assert.is(index.count, 500);
  assert.is(index.documentFrequency('common'), 500);
  assert.equal(index.search(['w321'], 5).map((r) => r.key), [321]);
  assert.is(index.search(['common'], 1000).length, 500);
});

test.run();
