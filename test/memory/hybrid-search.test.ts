import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { relativeScoreFusion } from '../../src/memory/hybrid-search.js';
import type { Match } from '../../src/ports/index.js';
import { reflection } from './fixtures.js';

const fusion = suite('relative score fusion (above the reflection store port)');

const match = (id: string, score: number, cosine = score, createdAt = 1_000): Match => ({
  id,
  reflection: reflection({ id, createdAt }),
  score,
  cosine,
});

fusion('min-max normalisation like Weaviate: [1, 8, 6, 11] -> [0, 0.7, 0.5, 1]; all equal -> 1', () => {
  const fused = relativeScoreFusion([1, 8, 6, 11].map((score, i) => match(`r${i}`, score)), [], 1);
  const byId = new Map(fused.map((f) => [f.reflection.id, Math.round(f.score * 10) / 10]));
  assert.equal([0, 1, 2, 3].map((i) => byId.get(`r${i}`)), [0, 0.7, 0.5, 1]);
  assert.equal(relativeScoreFusion([match('a', 3), match('b', 3)], [], 1).map((f) => f.score), [1, 1]);
});

fusion('fused = alpha * vector + (1 - alpha) * keyword; missing from a list counts 0; cosine passes through', () => {
  const vector = [match('1', 0.9), match('2', 0.5), match('3', 0.1)];
  const keyword = [match('3', 12, 0.1), match('4', 2, 0.05)];
  const fused = relativeScoreFusion(vector, keyword, 0.75);
  const byId = new Map(fused.map((f) => [f.reflection.id, f]));
  assert.ok(Math.abs((byId.get('1')?.score ?? -1) - 0.75) < 1e-9);
  assert.ok(Math.abs((byId.get('2')?.score ?? -1) - 0.375) < 1e-9);
  assert.ok(Math.abs((byId.get('3')?.score ?? -1) - 0.25) < 1e-9);
  assert.is(byId.get('4')?.score, 0);
  assert.is(byId.get('4')?.vectorScore, 0.05, 'the cosine of a keyword-only match is kept');
  assert.is(byId.get('3')?.keywordScore, 1);
  assert.is(byId.get('1')?.keywordScore, 0);
  assert.equal(fused.map((f) => f.reflection.id), ['1', '2', '3', '4']);
  assert.equal(relativeScoreFusion([], [], 0.5), []);
});

fusion('limit, and ties: higher cosine, then older, then smaller id', () => {
  const fused = relativeScoreFusion([match('b', 1, 0.5, 2_000), match('a', 1, 0.5, 2_000), match('c', 1, 0.5, 1_000), match('d', 1, 0.9, 3_000)], [], 1, 3);
  assert.equal(fused.map((f) => f.reflection.id), ['d', 'c', 'a']);
});

fusion.run();
