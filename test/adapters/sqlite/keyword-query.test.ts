import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { normalise, relativeScoreFusion } from '../../../src/adapters/sqlite/fusion.js';
import { pruneTerms, queryTerms, words } from '../../../src/adapters/sqlite/keyword-query.js';

const keywords = suite('keyword query');

keywords('free text becomes distinct words without stopwords, capped', () => {
  assert.equal(queryTerms('How do I run the "tests" AND NEAR(x, 2)?'), ['how', 'do', 'i', 'run', 'tests', 'near', 'x', '2']);
  assert.equal(queryTerms('Café CAFÉ cafe'), ['cafe']);
  assert.equal(queryTerms('the of and'), []);
  assert.is(queryTerms(Array.from({ length: 100 }, (_, i) => `w${i}`).join(' ')).length, 32);
  assert.equal(words('Déjà-vu, naïve_CODE 42'), ['deja', 'vu', 'naive', 'code', '42']);
});

keywords('pruning keeps rare terms within the budget and drops near-universal ones', () => {
  const df: Record<string, number> = { rare: 2, mid: 300, common: 900, everywhere: 6000 };
  const frequency = (term: string): number => df[term] ?? 0;
  assert.equal(pruneTerms(['common', 'rare', 'mid', 'everywhere'], frequency, 500, 1000), ['common', 'rare', 'mid', 'everywhere']);
  assert.equal(pruneTerms(['common', 'rare', 'mid', 'everywhere', 'unknown'], frequency, 10_000, 1000), ['unknown', 'rare', 'mid']);
  assert.equal(pruneTerms(['common'], frequency, 10_000, 100), ['common'], 'the rarest term is always kept');
  assert.equal(pruneTerms(['everywhere'], frequency, 10_000, 100), [], 'a term in most documents ranks nothing');
});

keywords.run();

const fusion = suite('relative score fusion');

fusion('min-max normalisation like Weaviate: [1, 8, 6, 11] -> [0, 0.7, 0.5, 1]; all equal -> 1', () => {
  const normalised = normalise([1, 8, 6, 11].map((score, key) => ({ key, score })));
  assert.equal([...normalised.values()].map((v) => Math.round(v * 10) / 10), [0, 0.7, 0.5, 1]);
  assert.equal([...normalise([{ key: 1, score: 3 }, { key: 2, score: 3 }]).values()], [1, 1]);
});

fusion('fused = alpha * vector + (1 - alpha) * keyword; missing from a list counts 0', () => {
  const vector = [
    { key: 1, score: 0.9 },
    { key: 2, score: 0.5 },
    { key: 3, score: 0.1 },
  ];
  const keyword = [
    { key: 3, score: 12 },
    { key: 4, score: 2 },
  ];
  const fused = relativeScoreFusion(vector, keyword, 0.75);
  const byKey = new Map(fused.map((f) => [f.key, f]));
  assert.ok(Math.abs((byKey.get(1)?.score ?? -1) - 0.75) < 1e-9);
  assert.ok(Math.abs((byKey.get(2)?.score ?? -1) - 0.375) < 1e-9);
  assert.ok(Math.abs((byKey.get(3)?.score ?? -1) - 0.25) < 1e-9);
  assert.is(byKey.get(4)?.score, 0);
  assert.equal(fused.map((f) => f.key), [1, 2, 3, 4]);
  assert.equal(relativeScoreFusion([], [], 0.5), []);
});

fusion.run();
