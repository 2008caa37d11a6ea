import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openDatabase } from '../../../src/adapters/sqlite/database.js';
import { SqliteReflectionStore } from '../../../src/adapters/sqlite/reflection-store.js';
import type { StoredReflection } from '../../../src/memory/ports.js';
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

sqlite('keyword indexes stay consistent through upserts, updates and deletes, one per agent', async () => {
  const db = openDatabase(':memory:');
  const store = new SqliteReflectionStore(db);
  await store.upsert([reflection(A, 'r1', 'alpha', 0), reflection(A, 'r2', 'beta', 1)]);
  await store.upsert([reflection(A, 'r1', 'alpha again', 0, { tags: ['x'] })]);
  await store.update(A, 'r2', { content: 'gamma', tags: ['y'] });
  await store.delete(A, 'r1');
  await store.upsert([reflection('agt_b', 'r1', 'delta', 0)]);
  await store.deleteAgent('agt_b');
  const tables = db
    .prepare(`SELECT t.agent_id AS agent, t.n AS n FROM reflection_tenants t ORDER BY t.n`)
    .all() as { agent: string; n: number }[];
  assert.equal(tables.map((t) => t.agent), [A, 'agt_b']);
  const match = (n: number, word: string): number[] =>
    (db.prepare(`SELECT rowid FROM reflections_fts_${n} WHERE reflections_fts_${n} MATCH ?`).all(`"${word}"`) as {
      rowid: number;
    }[]).map((r) => r.rowid);
  for (const { n } of tables) db.exec(`INSERT INTO reflections_fts_${n}(reflections_fts_${n}) VALUES ('integrity-check')`);
  assert.equal(match(tables[0].n, 'alpha'), []);
  assert.equal(match(tables[0].n, 'beta'), []);
  assert.is(match(tables[0].n, 'gamma').length, 1);
  assert.is(match(tables[0].n, 'y').length, 1);
  assert.equal(match(tables[1].n, 'delta'), []);
  db.close();
});

sqlite('a rolled-back first write leaves the store usable', async () => {
  const db = openDatabase(':memory:');
  const store = new SqliteReflectionStore(db);
  const bad = { ...reflection(A, 'r1', 'alpha', 0), kind: undefined } as unknown as StoredReflection;
  let failed = false;
  try {
    await store.upsert([reflection(A, 'r0', 'zero', 0), bad]);
  } catch {
    failed = true;
  }
  assert.ok(failed, 'a NOT NULL violation aborts the batch');
  assert.is(await store.count(A), 0);
  await store.upsert([reflection(A, 'r1', 'alpha', 0)]);
  assert.is((await store.search(A, { text: 'alpha', vector: unitVector(8, { 3: 1 }), limit: 1 }))[0].keywordScore, 1);
  db.close();
});

sqlite('large stores prune very common query words; small stores search every word', async () => {
  const db = openDatabase(':memory:');
  const store = new SqliteReflectionStore(db, { keywordPostingBudget: 4 });
  await store.upsert(
    Array.from({ length: 10 }, (_, i) => reflection(A, `r${i}`, i === 7 ? 'common rare' : 'common words', i % 8)),
  );
  const results = await store.search(A, { text: 'common rare', vector: unitVector(8, { 0: 1 }), limit: 10 });
  assert.equal(results.filter((r) => r.keywordScore > 0).map((r) => r.reflection.id), ['r7']);
  db.close();
});

sqlite('tags and topic are searchable; diacritics and case do not matter', async () => {
  const db = openDatabase(':memory:');
  const store = new SqliteReflectionStore(db);
  await store.upsert([
    reflection(A, 'tagged', 'plain content', 0, { tags: ['terraform'] }),
    reflection(A, 'topical', 'other content', 1, { topic: 'billing' }),
    reflection(A, 'accent', 'Le café est fermé', 3),
  ]);
  const top = async (text: string): Promise<string> =>
    (await store.search(A, { text, vector: unitVector(8, { 7: 1 }), limit: 1 }))[0].reflection.id;
  assert.is(await top('terraform'), 'tagged');
  assert.is(await top('billing'), 'topical');
  assert.is(await top('CAFE'), 'accent');
  assert.is(await top('Fermé'), 'accent');
  db.close();
});

sqlite('snapshots patched by local writes search exactly like freshly built ones', async () => {
  const db = openDatabase(':memory:');
  // A tiny posting budget makes keyword pruning (and so the word frequencies) matter.
  const patched = new SqliteReflectionStore(db, { keywordPostingBudget: 3 });
  let seed = 7;
  const random = (): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed / 2_147_483_648;
  };
  const vocabulary = ['deploy', 'cache', 'redis', 'tests', 'lint', 'docker', 'queue', 'budget', 'token', 'index'];
  const text = (): string => Array.from({ length: 4 }, () => vocabulary[Math.floor(random() * vocabulary.length)]).join(' ');
  const vector = (): Float32Array => unitVector(8, { [Math.floor(random() * 8)]: 1, [Math.floor(random() * 8)]: random() });
  const query = () => ({ text: text(), vector: vector(), limit: 6 });
  for (let step = 0; step < 120; step++) {
    const id = `r${Math.floor(random() * 40)}`;
    const op = random();
    if (op < 0.5) {
      await patched.upsert([reflection(A, id, text(), 0, { vector: vector(), kind: random() < 0.3 ? 'procedural' : 'factual' })]);
    } else if (op < 0.75) {
      await patched.update(A, id, random() < 0.5 ? { content: text() } : { vector: vector(), kind: 'procedural' });
    } else {
      await patched.delete(A, id);
    }
    if (step % 10 === 0) await patched.search(A, query()); // builds, then keeps patching
    const fresh = new SqliteReflectionStore(db, { keywordPostingBudget: 3 });
    const q = query();
    assert.equal(
      (await patched.nearest(A, q.vector, 5)).map((r) => [r.reflection.id, r.vectorScore.toFixed(5)]),
      (await fresh.nearest(A, q.vector, 5)).map((r) => [r.reflection.id, r.vectorScore.toFixed(5)]),
      `nearest at step ${step}`,
    );
    assert.equal(
      (await patched.search(A, { ...q, kind: 'procedural' })).map((r) => r.reflection.id),
      (await fresh.search(A, { ...q, kind: 'procedural' })).map((r) => r.reflection.id),
      `kind-filtered search at step ${step}`,
    );
    assert.equal(
      (await patched.search(A, q)).map((r) => [r.reflection.id, r.score.toFixed(5)]),
      (await fresh.search(A, q)).map((r) => [r.reflection.id, r.score.toFixed(5)]),
      `search at step ${step}`,
    );
  }
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
