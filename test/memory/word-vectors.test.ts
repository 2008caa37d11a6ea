/**
 * The batched cosines the reranker asks for agree with the one-at-a-time cosine, however
 * the calls before them sized the SIMD scratch.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WordVectors } from '../../src/memory/embedders/word-vectors.js';

function vectors(count: number, dims: number): WordVectors {
  let seed = 7;
  const random = () => ((seed = (seed * 16807) % 2147483647) / 2147483647) * 2 - 1;
  const data = Float32Array.from({ length: count * dims }, random);
  return new WordVectors(new Map(Array.from({ length: count }, (_, i) => [`w${i}`, i])), data, dims);
}

test('cosines(terms, rows) holds similarity(term, row) for every pair, term-major', () => {
  const words = vectors(300, 100);
  const check = (terms: number[], rows: number[]) => {
    const table = words.cosines(terms, rows);
    assert.is(table.length, terms.length * rows.length);
    for (let t = 0; t < terms.length; t++) {
      for (let u = 0; u < rows.length; u++) {
        assert.ok(Math.abs(table[t * rows.length + u] - words.similarity(terms[t], rows[u])) < 1e-5, `${terms[t]} x ${rows[u]}`);
      }
    }
  };
  // A large call first, then smaller ones over the slots its query and scores used.
  check([1, 2, 3], Array.from({ length: 250 }, (_, i) => i + 20));
  check([4, 5], [7, 8, 9]);
  check([0], [299, 0, 150]);
  assert.is(words.cosines([], [1, 2]).length, 0);
  assert.is(words.cosines([1], []).length, 0);
});

test.run();
