/**
 * The injection evaluation runs and its sets keep their documented shape, so neither rots
 * between `npm run eval`s. Quality is not asserted here: the figures are for measurement
 * (bench/eval/injection-set.ts explains why a set must not be tuned against).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { curve, injectedAt, pointAt } from '../../bench/eval/curve.js';
import { judgeSet, summarise, type InjectionSet, type JudgedSet } from '../../bench/eval/injection.js';
import { BLIND_SET, CALIBRATION_SET } from '../../bench/eval/sets.js';
import { loadWordVectors } from '../../src/adapters/embeddings/word-vectors-file.js';
import { DEFAULT_MEMORY_SETTINGS } from '../../src/domain/types.js';
import { createLocalEmbedder } from '../../src/memory/embedders/local-embedder.js';
import { createSemanticEmbedder } from '../../src/memory/embedders/semantic-embedder.js';
import { createSoftMatchReranker } from '../../src/memory/rerank.js';

const count = <T>(items: readonly T[], key: (item: T) => string) => {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
};

function assertSetShape(set: InjectionSet): void {
  const ids = new Set(set.REFLECTIONS.map((r) => r.id));
  assert.is(ids.size, set.REFLECTIONS.length, `${set.name}: unique ids`);
  assert.equal(set.NEEDING.filter((r) => !ids.has(r.needs)).map((r) => r.needs), [], `${set.name}: every need exists`);
  const needed = new Set(set.NEEDING.map((r) => r.needs));
  assert.equal([...ids].filter((id) => !needed.has(id)), [], `${set.name}: every reflection is needed`);
  const texts = [...set.NEEDING, ...set.UNRELATED].map((r) => r.text);
  assert.is(new Set(texts).size, texts.length, `${set.name}: no request appears twice`);
  assert.equal(Object.keys(set.REFLECTION_TAGS).sort(), [...ids].sort(), `${set.name}: every reflection has its extraction tags`);
}

test('the sets have their documented sizes, unique ids, and every reflection is needed', () => {
  assert.is(CALIBRATION_SET.REFLECTIONS.length, 52);
  assert.equal(count(CALIBRATION_SET.REFLECTIONS, (r) => r.kind), { factual: 25, procedural: 27 });
  assert.equal(count(CALIBRATION_SET.NEEDING, (r) => r.phrasing), { paraphrase: 49, direct: 41 });
  assert.equal(count(CALIBRATION_SET.UNRELATED, (r) => r.kind), { programming: 26, 'other-topic': 18, 'small-talk': 9, 'near-miss': 27 });
  assert.is(BLIND_SET.REFLECTIONS.length, 55);
  assert.equal(count(BLIND_SET.REFLECTIONS, (r) => r.kind), { factual: 28, procedural: 27 });
  assert.equal(count(BLIND_SET.NEEDING, (r) => r.phrasing), { direct: 65, paraphrase: 58 });
  assert.equal(count(BLIND_SET.UNRELATED, (r) => r.kind), { programming: 30, 'other-topic': 20, 'small-talk': 10, 'near-miss': 40 });
  for (const set of [CALIBRATION_SET, BLIND_SET]) assertSetShape(set);
});

function assertWellFormed(set: InjectionSet, judged: JudgedSet): void {
  assert.is(judged.stored + judged.merged.length, set.REFLECTIONS.length);
  assert.is(judged.requests.length, set.NEEDING.length + set.UNRELATED.length);
  // What `retrieve` injected is what the emulation says: the curve describes the proxy.
  assert.is(judged.drift, 0);
  const ids = new Set(set.REFLECTIONS.map((r) => r.id));
  for (const request of judged.requests) {
    for (const candidate of request.candidates) {
      assert.ok(ids.has(candidate.id), candidate.id);
      assert.ok(Number.isFinite(candidate.cosine) && candidate.named >= 0 && candidate.named <= 1, JSON.stringify(candidate));
    }
  }
  const rule = { minCosine: 0.5, namedBonus: 0.1 };
  const summary = summarise(judged, rule, DEFAULT_MEMORY_SETTINGS.minScore);
  for (const share of [summary.direct, summary.paraphrase, summary.unrelated, summary.first]) assert.ok(share >= 0 && share <= 1, String(share));
  assert.is(summary.falsePositives.length, Math.round(summary.unrelated * set.UNRELATED.length));
  // A higher bar never lets more unrelated requests through, and the curve keeps its bounds.
  const points = curve(judged.requests, rule, 5);
  assert.ok(points[0].unrelated <= 0.02 && points[1].unrelated <= 0.05 && points[2].unrelated <= 0.1, JSON.stringify(points));
  assert.ok(points[0].minScore >= points[1].minScore && points[1].minScore >= points[2].minScore);
  assert.ok(pointAt(judged.requests, rule, 0.9, 5).unrelated <= pointAt(judged.requests, rule, 0.1, 5).unrelated);
  for (const request of judged.requests) assert.ok(injectedAt(request, rule, 0.2, 5).length <= 5);
}

test('runs with the hashing embedder and returns a well-formed result', async () => {
  const embedder = createLocalEmbedder();
  assertWellFormed(CALIBRATION_SET, await judgeSet(CALIBRATION_SET, embedder));
});

test('runs as serve does without an embeddings endpoint: semantic embedder, reranker and named terms, with and without tags, on both sets', async () => {
  const words = loadWordVectors();
  const embedder = createSemanticEmbedder(words);
  const options = { reranker: createSoftMatchReranker(words), vocabulary: words };
  for (const set of [CALIBRATION_SET, BLIND_SET]) {
    for (const tags of [false, true]) {
      const judged = await judgeSet(set, embedder, { ...options, tags });
      assert.is(judged.tagged, tags);
      assertWellFormed(set, judged);
    }
  }
});

test.run();
