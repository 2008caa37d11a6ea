/**
 * The injection evaluation runs and its set keeps its documented shape, so neither rots
 * between `npm run eval`s. Quality is not asserted here: the figures are for measurement
 * (bench/eval/injection-set.ts explains why the set must not be tuned against).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { evalInjection, type InjectionResult } from '../../bench/eval/injection.js';
import { NEEDING, REFLECTION_TAGS, REFLECTIONS, UNRELATED } from '../../bench/eval/injection-set.js';
import { loadWordVectors } from '../../src/adapters/embeddings/word-vectors-file.js';
import { createLocalEmbedder } from '../../src/memory/embedders/local-embedder.js';
import { createSemanticEmbedder } from '../../src/memory/embedders/semantic-embedder.js';
import { createSoftMatchReranker } from '../../src/memory/rerank.js';

const count = <T>(items: readonly T[], key: (item: T) => string) => {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
};

test('the set has its documented sizes, unique ids, and every reflection is needed', () => {
  assert.is(REFLECTIONS.length, 52);
  assert.equal(count(REFLECTIONS, (r) => r.kind), { factual: 25, procedural: 27 });
  assert.is(NEEDING.length, 90);
  assert.equal(count(NEEDING, (r) => r.phrasing), { paraphrase: 49, direct: 41 });
  assert.is(UNRELATED.length, 80);
  assert.equal(count(UNRELATED, (r) => r.kind), { programming: 26, 'other-topic': 18, 'small-talk': 9, 'near-miss': 27 });

  const ids = new Set(REFLECTIONS.map((r) => r.id));
  assert.is(ids.size, REFLECTIONS.length);
  assert.equal(NEEDING.filter((r) => !ids.has(r.needs)).map((r) => r.needs), []);
  const needed = new Set(NEEDING.map((r) => r.needs));
  assert.equal([...ids].filter((id) => !needed.has(id)), []);
  const texts = [...NEEDING, ...UNRELATED].map((r) => r.text);
  assert.is(new Set(texts).size, texts.length, 'no request appears twice');
  assert.equal(Object.keys(REFLECTION_TAGS).sort(), [...ids].sort(), 'every reflection has its extraction tags');
});

function assertWellFormed(result: InjectionResult): void {
  assert.is(result.reflections, REFLECTIONS.length);
  assert.is(result.stored + result.merged.length, REFLECTIONS.length);
  assert.is(result.needing, NEEDING.length);
  assert.is(result.unrelated, UNRELATED.length);
  for (const share of [result.neededHit, result.neededTop1, result.unrelatedAny]) assert.ok(share >= 0 && share <= 1, String(share));
  assert.ok(result.neededTop1 <= result.neededHit);
  assert.ok(result.meanInjectedNeeding >= 0 && result.meanInjectedUnrelated >= 0);
  assert.is(result.misses.length, Math.round((1 - result.neededHit) * NEEDING.length));
  assert.is(result.falsePositives.length, Math.round(result.unrelatedAny * UNRELATED.length));
  // The reproduced query still matches what retrieval searches: the candidates explain its decisions.
  assert.is(result.queryDrift, 0);

  assert.is(result.candidates.length, NEEDING.length + UNRELATED.length);
  const ids = new Set(REFLECTIONS.map((r) => r.id));
  for (const entry of result.candidates) {
    assert.type(entry.request, 'string');
    for (const id of entry.injected) assert.ok(ids.has(id), id);
    for (const r of entry.results) {
      assert.ok(ids.has(r.id), r.id);
      for (const score of [r.score, r.vectorScore, r.keywordScore]) assert.ok(Number.isFinite(score), `${r.id}: ${score}`);
    }
  }
  assert.is(result.candidates.filter((entry) => entry.needs !== undefined).length, NEEDING.length);
}

test('runs with the hashing embedder and returns a well-formed result', async () => {
  const result = await evalInjection(createLocalEmbedder());
  assert.not.ok(result.reranked);
  assertWellFormed(result);
});

test('runs as serve does without an embeddings endpoint: semantic embedder and reranker, reflections with and without tags', async () => {
  const words = loadWordVectors();
  const embedder = createSemanticEmbedder(words);
  const reranker = createSoftMatchReranker(words);
  const result = await evalInjection(embedder, { reranker });
  assert.ok(result.reranked);
  assert.not.ok(result.tagged);
  assertWellFormed(result);
  const tagged = await evalInjection(embedder, { reranker, tags: true });
  assert.ok(tagged.tagged);
  assertWellFormed(tagged);
});

test.run();
