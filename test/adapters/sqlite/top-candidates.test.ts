import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { TopCandidates } from '../../../src/adapters/sqlite/top-candidates.js';

const test = suite('TopCandidates');

test('keeps exactly the best `limit` (ties: lower key first), whatever the input order', () => {
  let seed = 3;
  const random = (): number => ((seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647);
  for (const n of [0, 1, 7, 100, 1000]) {
    for (const limit of [0, 1, 5, 100, 2000]) {
      for (const shape of ['random', 'ties', 'ascending', 'descending']) {
        const pairs = Array.from({ length: n }, (_, i) => ({
          key: i + 1,
          score: shape === 'ties' ? Math.floor(random() * 3) : shape === 'ascending' ? i : shape === 'descending' ? -i : random(),
        }));
        const shuffled = shape === 'random' || shape === 'ties' ? [...pairs].sort(() => random() - 0.5) : pairs;
        const top = new TopCandidates(limit);
        for (const { score, key } of shuffled) top.offer(score, key);
        const expected = [...pairs].sort((a, b) => b.score - a.score || a.key - b.key).slice(0, limit);
        assert.equal(top.ordered(), expected, `n ${n}, limit ${limit}, ${shape}`);
      }
    }
  }
});

test('unordered holds the same pairs as ordered', () => {
  const top = new TopCandidates(3);
  for (const [score, key] of [[0.5, 1], [0.9, 2], [0.1, 3], [0.9, 4], [0.7, 5]]) top.offer(score, key);
  assert.equal(top.unordered().sort((a, b) => a.key - b.key), [
    { key: 2, score: 0.9 },
    { key: 4, score: 0.9 },
    { key: 5, score: 0.7 },
  ]);
});

test.run();
