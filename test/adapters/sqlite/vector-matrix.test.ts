import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { VectorMatrix, type VectorRow } from '../../../src/adapters/sqlite/vector-matrix.js';
import { unitVector } from '../../contracts/helpers.js';

const test = suite('VectorMatrix');

function rowsOf(vectors: Float32Array[], kinds: string[] = []): VectorRow[] {
  return vectors.map((vector, i) => ({
    seq: i + 1,
    kind: kinds[i] ?? 'factual',
    vector: new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength),
  }));
}

function randomUnit(dims: number, random: () => number): Float32Array {
  const components: Record<number, number> = {};
  for (let i = 0; i < dims; i++) components[i] = random() * 2 - 1;
  return unitVector(dims, components);
}

function exactTop(vectors: Float32Array[], query: Float32Array, limit: number): number[] {
  return vectors
    .map((v, i) => ({ seq: i + 1, score: v.reduce((sum, x, j) => sum + x * query[j], 0) }))
    .sort((a, b) => b.score - a.score || a.seq - b.seq)
    .slice(0, limit)
    .map((c) => c.seq);
}

test('SIMD and scalar scoring agree with an exact computation, for odd dimensions too', () => {
  let seed = 1;
  const random = (): number => ((seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647);
  for (const dims of [3, 8, 13, 256]) {
    const vectors = Array.from({ length: 300 }, () => randomUnit(dims, random));
    const query = randomUnit(dims, random);
    const expected = exactTop(vectors, query, 10);
    for (const simd of [true, false]) {
      const matrix = new VectorMatrix(rowsOf(vectors), 0, simd);
      const top = matrix.top(query, 10);
      assert.equal(top.map((c) => c.key), expected, `dims ${dims}, simd ${simd}`);
      const row = matrix.rowOfSeq.get(top[0].key) ?? -1;
      assert.ok(Math.abs(top[0].score - matrix.cosineAt(row, query)) < 1e-5);
    }
  }
});

test('put, replace and remove keep rows addressable by seq', () => {
  const vectors = [unitVector(8, { 0: 1 }), unitVector(8, { 1: 1 }), unitVector(8, { 2: 1 })];
  const matrix = new VectorMatrix(rowsOf(vectors, ['factual', 'procedural', 'factual']), 1);
  matrix.remove(1); // the last row moves into its place
  assert.is(matrix.count, 2);
  assert.equal(matrix.top(unitVector(8, { 2: 1 }), 1).map((c) => c.key), [3]);
  assert.equal(matrix.top(unitVector(8, { 1: 1 }), 5, 1).map((c) => c.key), [2], 'kind filter');
  const added = unitVector(8, { 5: 1 });
  assert.ok(matrix.put(9, 'factual', new Uint8Array(added.buffer)));
  assert.equal(matrix.top(added, 1).map((c) => c.key), [9]);
  const replaced = unitVector(8, { 6: 1 });
  assert.ok(matrix.put(9, 'procedural', new Uint8Array(replaced.buffer)));
  assert.equal(matrix.top(replaced, 1, 1).map((c) => c.key), [9]);
  assert.ok(matrix.put(10, 'factual', new Uint8Array(added.buffer)), 'the spare row');
  assert.not.ok(matrix.put(11, 'factual', new Uint8Array(added.buffer)), 'full: caller rebuilds');
  const longer = unitVector(16, { 0: 1 });
  assert.not.ok(matrix.put(9, 'factual', new Uint8Array(longer.buffer)), 'longer than the stride: caller rebuilds');
});

test('an empty matrix answers nothing', () => {
  const matrix = new VectorMatrix([]);
  assert.equal(matrix.top(unitVector(8, { 0: 1 }), 5), []);
});

test.run();
