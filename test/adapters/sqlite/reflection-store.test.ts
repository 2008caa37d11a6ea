import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openDatabase } from '../../../src/adapters/sqlite/database.js';
import { SqliteReflectionStore } from '../../../src/adapters/sqlite/reflection-store.js';
import { unitVector } from '../../contracts/helpers.js';
import { reflection, reflectionStoreContract } from '../../contracts/reflection-store.contract.js';
import { tempDb } from './helpers.js';

reflectionStoreContract('sqlite (file)', async () => {
  const temp = tempDb();
  const store = new SqliteReflectionStore(temp.db);
  return {
    store,
    cleanup: async () => {
      await store.close();
      temp.remove();
    },
  };
});

reflectionStoreContract('sqlite (:memory:, tiny fusion window)', async () => {
  const db = openDatabase(':memory:');
  // A window smaller than the data exercises candidates missing from one list.
  const store = new SqliteReflectionStore(db, { fusionCandidates: 2 });
  return {
    store,
    cleanup: async () => {
      await store.close();
      db.close();
    },
  };
});

const sqlite = suite('SqliteReflectionStore specifics');
const A = 'agt_a';

sqlite('a second store on the same file sees writes at once (cache versioning)', async () => {
  const temp = tempDb();
  try {
    const writer = new SqliteReflectionStore(temp.db);
    const reader = new SqliteReflectionStore(temp.db);
    await writer.upsert([reflection(A, 'r1', 'first', 0)]);
    assert.equal((await reader.nearest(A, unitVector(8, { 0: 1 }), 5)).map((r) => r.reflection.id), ['r1']);
    await writer.upsert([reflection(A, 'r2', 'second', 1)]);
    assert.is((await reader.nearest(A, unitVector(8, { 1: 1 }), 1))[0].reflection.id, 'r2');
    await writer.update(A, 'r2', { vector: unitVector(8, { 2: 1 }) });
    assert.is((await reader.nearest(A, unitVector(8, { 2: 1 }), 1))[0].reflection.id, 'r2');
    await writer.delete(A, 'r1');
    assert.equal((await reader.nearest(A, unitVector(8, { 0: 1 }), 5)).map((r) => r.reflection.id), ['r2']);
  } finally {
    temp.remove();
  }
});

sqlite('FTS index stays consistent through upserts, updates and deletes', async () => {
  const db = openDatabase(':memory:');
  const store = new SqliteReflectionStore(db);
  await store.upsert([reflection(A, 'r1', 'alpha', 0), reflection(A, 'r2', 'beta', 1)]);
  await store.upsert([reflection(A, 'r1', 'alpha again', 0, { tags: ['x'] })]);
  await store.update(A, 'r2', { content: 'gamma', tags: ['y'] });
  await store.delete(A, 'r1');
  await store.upsert([reflection('agt_b', 'r1', 'delta', 0)]);
  await store.deleteAgent('agt_b');
  db.exec(`INSERT INTO reflections_fts(reflections_fts) VALUES ('integrity-check')`);
  const match = (word: string): number =>
    (db.prepare('SELECT COUNT(*) AS n FROM reflections_fts WHERE reflections_fts MATCH ?').get(word) as { n: number }).n;
  assert.is(match('alpha'), 0);
  assert.is(match('gamma'), 1);
  assert.is(match('delta'), 0);
  db.close();
});

sqlite('tags and topic are searchable; stemming matches word forms', async () => {
  const db = openDatabase(':memory:');
  const store = new SqliteReflectionStore(db);
  await store.upsert([
    reflection(A, 'tagged', 'plain content', 0, { tags: ['terraform'] }),
    reflection(A, 'topical', 'other content', 1, { topic: 'billing' }),
    reflection(A, 'stem', 'Tests are running nightly', 2),
  ]);
  const top = async (text: string): Promise<string> =>
    (await store.search(A, { text, vector: unitVector(8, { 7: 1 }), limit: 1 }))[0].reflection.id;
  assert.is(await top('terraform'), 'tagged');
  assert.is(await top('billing'), 'topical');
  assert.is(await top('run'), 'stem');
  db.close();
});

sqlite('re-upserting a known reflection keeps its usage counters', async () => {
  const db = openDatabase(':memory:');
  const store = new SqliteReflectionStore(db);
  await store.upsert([reflection(A, 'r1', 'one', 0)]);
  await store.markUsed(A, ['r1'], 9_000);
  await store.upsert([reflection(A, 'r1', 'one, re-extracted', 0, { createdAt: 5_000, updatedAt: 5_000 })]);
  const r1 = await store.get(A, 'r1');
  assert.is(r1?.useCount, 1);
  assert.is(r1?.lastUsedAt, 9_000);
  assert.is(r1?.createdAt, 1_000);
  assert.is(r1?.content, 'one, re-extracted');
  db.close();
});

sqlite('vectors of another dimension never match (embedder change mid re-embed)', async () => {
  const db = openDatabase(':memory:');
  const store = new SqliteReflectionStore(db);
  await store.upsert([
    reflection(A, 'old', 'old embedder', 0, { vector: unitVector(4, { 0: 1 }) }),
    reflection(A, 'new', 'new embedder', 0),
  ]);
  const near = await store.nearest(A, unitVector(8, { 0: 1 }), 5);
  assert.equal(near.map((r) => r.reflection.id), ['new']);
  const hybrid = await store.search(A, { text: 'embedder', vector: unitVector(8, { 0: 1 }), limit: 5 });
  assert.equal(hybrid.map((r) => r.reflection.id).sort(), ['new', 'old']);
  assert.is(hybrid.find((r) => r.reflection.id === 'old')?.vectorScore, 0);
  db.close();
});

sqlite('vectors round-trip exactly through the BLOB column', async () => {
  const db = openDatabase(':memory:');
  const store = new SqliteReflectionStore(db);
  const vector = unitVector(256, { 3: 0.3, 17: -0.7, 255: 0.1 });
  await store.upsert([reflection(A, 'r1', 'x', 0, { vector: vector.subarray(0) })]);
  const near = await store.nearest(A, vector, 1);
  let dot = 0;
  for (const v of vector) dot += v * v;
  assert.ok(Math.abs(near[0].vectorScore - dot) < 1e-6);
  db.close();
});

sqlite.run();
