import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openDatabase } from '../../../src/adapters/sqlite/database.js';
import { SqliteReflectionStore } from '../../../src/adapters/sqlite/reflection-store.js';
import type { ReflectionStore, StoredReflection } from '../../../src/ports/index.js';
import { hybridSearch } from '../../../src/memory/hybrid-search.js';
import { sleep, unitVector, waitFor } from '../../contracts/helpers.js';
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

const sqlite = suite('SqliteReflectionStore specifics');
/** Vector search, scored the way hybrid results are (the cosine as `vectorScore`). */
const near = async (store: ReflectionStore, agentId: string, vector: Float32Array, limit: number) =>
  (await store.nearest(agentId, { vector, limit }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
    .map((m) => ({ reflection: m.reflection, vectorScore: m.cosine }));
const A = 'agt_a';

sqlite('a second store on the same file sees writes at once (cache versioning)', async () => {
  const temp = tempDb();
  try {
    const writer = new SqliteReflectionStore(temp.db);
    const reader = new SqliteReflectionStore(temp.db);
    await writer.upsert([reflection(A, 'r1', 'first', 0)]);
    assert.equal((await near(reader, A, unitVector(8, { 0: 1 }), 5)).map((r) => r.reflection.id), ['r1']);
    await writer.upsert([reflection(A, 'r2', 'second', 1)]);
    assert.is((await near(reader, A, unitVector(8, { 1: 1 }), 1))[0].reflection.id, 'r2');
    await writer.update(A, 'r2', { vector: unitVector(8, { 2: 1 }) });
    assert.is((await near(reader, A, unitVector(8, { 2: 1 }), 1))[0].reflection.id, 'r2');
    await writer.delete(A, 'r1');
    assert.equal((await near(reader, A, unitVector(8, { 0: 1 }), 5)).map((r) => r.reflection.id), ['r2']);
  } finally {
    temp.remove();
  }
});

sqlite('keyword search follows upserts, updates and deletes, per agent; no FTS5 table is left', async () => {
  const db = openDatabase(':memory:');
  const store = new SqliteReflectionStore(db);
  const away = unitVector(8, { 7: 1 });
  const hits = async (agentId: string, word: string): Promise<string[]> =>
    (await hybridSearch(store, agentId, { text: word, vector: away, limit: 10 }))
      .filter((r) => r.keywordScore > 0)
      .map((r) => r.reflection.id)
      .sort();
  await store.upsert([reflection(A, 'r1', 'alpha', 0), reflection(A, 'r2', 'beta', 1)]);
  assert.equal(await hits(A, 'alpha'), ['r1'], 'built from the rows');
  await store.upsert([reflection(A, 'r1', 'alpha again', 0, { tags: ['xq'] })]);
  await store.update(A, 'r2', { content: 'gamma', tags: ['yq'] });
  await store.upsert([reflection('agt_b', 'r1', 'delta alpha', 0)]);
  assert.equal(await hits(A, 'xq'), ['r1']);
  assert.equal(await hits(A, 'beta'), [], 'replaced words are gone');
  assert.equal(await hits(A, 'gamma yq'), ['r2']);
  assert.equal(await hits(A, 'alpha'), ['r1'], 'never another agent’s rows');
  await store.delete(A, 'r1');
  await store.deleteAgent('agt_b');
  assert.equal(await hits(A, 'alpha xq'), []);
  assert.equal(await hits('agt_b', 'delta'), []);
  assert.equal(await hits(A, 'gamma'), ['r2']);
  const fts = db.prepare(`SELECT name FROM sqlite_master WHERE name LIKE 'reflections_fts%'`).all();
  assert.equal(fts, []);
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
  assert.is((await hybridSearch(store, A, { text: 'alpha', vector: unitVector(8, { 3: 1 }), limit: 1 }))[0].keywordScore, 1);
  db.close();
});

sqlite('large stores prune very common query words; small stores search every word', async () => {
  const db = openDatabase(':memory:');
  const store = new SqliteReflectionStore(db, { keywordPostingBudget: 4 });
  await store.upsert(
    Array.from({ length: 10 }, (_, i) => reflection(A, `r${i}`, i === 7 ? 'common rare' : 'common words', i % 8)),
  );
  const results = await hybridSearch(store, A, { text: 'common rare', vector: unitVector(8, { 0: 1 }), limit: 10 });
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
    (await hybridSearch(store, A, { text, vector: unitVector(8, { 7: 1 }), limit: 1 }))[0].reflection.id;
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
    if (step % 10 === 0) await hybridSearch(patched, A, query()); // builds, then keeps patching
    const fresh = new SqliteReflectionStore(db, { keywordPostingBudget: 3 });
    const q = query();
    assert.equal(
      (await near(patched, A, q.vector, 5)).map((r) => [r.reflection.id, r.vectorScore.toFixed(5)]),
      (await near(fresh, A, q.vector, 5)).map((r) => [r.reflection.id, r.vectorScore.toFixed(5)]),
      `nearest at step ${step}`,
    );
    assert.equal(
      (await hybridSearch(patched, A, { ...q, kind: 'procedural' })).map((r) => r.reflection.id),
      (await hybridSearch(fresh, A, { ...q, kind: 'procedural' })).map((r) => r.reflection.id),
      `kind-filtered search at step ${step}`,
    );
    assert.equal(
      (await hybridSearch(patched, A, q)).map((r) => [r.reflection.id, r.score.toFixed(5)]),
      (await hybridSearch(fresh, A, q)).map((r) => [r.reflection.id, r.score.toFixed(5)]),
      `search at step ${step}`,
    );
  }
  db.close();
});

sqlite('markUsed: seen at once by this store, written in one transaction within usageFlushMs and on close', async () => {
  const temp = tempDb();
  const other = openDatabase(temp.file); // another process's view of the file
  try {
    const store = new SqliteReflectionStore(temp.db, { usageFlushMs: 50 });
    await store.upsert([reflection(A, 'r1', 'one', 0), reflection(A, 'r2', 'two', 1)]);
    const stored = (id: string) =>
      other.prepare('SELECT use_count AS n, last_used_at AS at FROM reflections WHERE agent_id = ? AND id = ?').get(A, id);
    await hybridSearch(store, A, { text: 'one', vector: unitVector(8, { 0: 1 }), limit: 2 }); // a cached snapshot
    await store.markUsed(A, ['r1', 'r1', 'r2'], 10_000);
    await store.markUsed(A, ['r1'], 9_000);
    assert.equal(stored('r1'), { n: 0, at: null }, 'not written yet');
    assert.is((await store.get(A, 'r1'))?.useCount, 2, 'a repeated id counts once per call');
    assert.is((await store.get(A, 'r1'))?.lastUsedAt, 10_000, 'the latest use wins');
    assert.equal((await store.list(A)).map((r) => [r.id, r.useCount]).sort(), [['r1', 2], ['r2', 1]]);
    const found = await hybridSearch(store, A, { text: 'one two', vector: unitVector(8, { 0: 1 }), limit: 2 });
    assert.equal(found.map((r) => [r.reflection.id, r.reflection.useCount]).sort(), [['r1', 2], ['r2', 1]]);
    assert.is((await new SqliteReflectionStore(temp.db).get(A, 'r1'))?.useCount, 0, 'another store reads the file');

    await waitFor(() => (stored('r1') as { n: number }).n === 2, 2000, 'the flush');
    assert.equal(stored('r1'), { n: 2, at: 10_000 });
    assert.equal(stored('r2'), { n: 1, at: 10_000 });
    assert.is((await store.get(A, 'r1'))?.useCount, 2, 'flushed uses are not counted twice');
    const again = await hybridSearch(store, A, { text: 'one', vector: unitVector(8, { 0: 1 }), limit: 1 });
    assert.is(again[0].reflection.useCount, 2);

    await store.markUsed(A, ['r2'], 11_000);
    await store.close();
    assert.equal(stored('r2'), { n: 2, at: 11_000 }, 'close() writes what is pending');
    await store.markUsed(A, ['r2'], 12_000);
    assert.equal(stored('r2'), { n: 3, at: 12_000 }, 'after close, uses are written at once');
  } finally {
    other.close();
    temp.remove();
  }
});

sqlite('markUsed: a snapshot built while uses are pending includes them; writes flush them first', async () => {
  const db = openDatabase(':memory:');
  const store = new SqliteReflectionStore(db, { usageFlushMs: 60_000 });
  await store.upsert([reflection(A, 'r1', 'one', 0)]);
  await store.markUsed(A, ['r1'], 5_000);
  const first = await hybridSearch(store, A, { text: 'one', vector: unitVector(8, { 0: 1 }), limit: 1 });
  assert.is(first[0].reflection.useCount, 1, 'built from the file, plus what is pending');
  // A caller that read the counters writes them back: the use must not count twice.
  const read = await store.get(A, 'r1');
  if (!read) throw new Error('missing');
  await store.upsert([{ ...reflection(A, 'r1', 'one, again', 0), useCount: read.useCount, lastUsedAt: read.lastUsedAt }]);
  assert.is((await store.get(A, 'r1'))?.useCount, 1);
  assert.is((db.prepare('SELECT use_count FROM reflections').pluck().get() as number), 1, 'written with the upsert');
  assert.is((await hybridSearch(store, A, { text: 'again', vector: unitVector(8, { 0: 1 }), limit: 1 }))[0].reflection.useCount, 1);
  // Deleted and re-created before a flush: the old uses do not carry over.
  await store.markUsed(A, ['r1'], 6_000);
  await store.delete(A, 'r1');
  await store.upsert([reflection(A, 'r1', 'new', 0)]);
  assert.is((await store.get(A, 'r1'))?.useCount, 0);
  await store.close();
  assert.is((db.prepare('SELECT use_count FROM reflections').pluck().get() as number), 0);
  db.close();
});

sqlite('markUsed: uses pending when the owner closes the file are dropped quietly', async () => {
  const db = openDatabase(':memory:');
  const errors: unknown[] = [];
  const store = new SqliteReflectionStore(db, { usageFlushMs: 20, onError: (error) => errors.push(error) });
  await store.upsert([reflection(A, 'r1', 'one', 0)]);
  await store.markUsed(A, ['r1'], 5_000);
  db.close();
  await sleep(60);
  await store.close();
  assert.equal(errors, []);
});

sqlite('the snapshot cache is bounded by agents and by reflections held; evicted agents search the same', async () => {
  const db = openDatabase(':memory:');
  const store = new SqliteReflectionStore(db, { cachedAgents: 3, cachedReflections: 5 });
  const agents = ['agt_1', 'agt_2', 'agt_3'];
  for (const [i, agentId] of agents.entries()) {
    await store.upsert(Array.from({ length: 3 }, (_, k) => reflection(agentId, `r${k}`, `word${i} text${k}`, k)));
  }
  for (let round = 0; round < 2; round++) {
    for (const [i, agentId] of agents.entries()) {
      const found = await hybridSearch(store, agentId, { text: `word${i} text1`, vector: unitVector(8, { 1: 1 }), limit: 1 });
      assert.equal(found.map((r) => [r.reflection.agentId, r.reflection.id]), [[agentId, 'r1']]);
    }
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
  const nearby = await near(store, A, unitVector(8, { 0: 1 }), 5);
  assert.equal(nearby.map((r) => r.reflection.id), ['new']);
  const hybrid = await hybridSearch(store, A, { text: 'embedder', vector: unitVector(8, { 0: 1 }), limit: 5 });
  assert.equal(hybrid.map((r) => r.reflection.id).sort(), ['new', 'old']);
  assert.is(hybrid.find((r) => r.reflection.id === 'old')?.vectorScore, 0);
  db.close();
});

sqlite('vectors round-trip exactly through the BLOB column', async () => {
  const db = openDatabase(':memory:');
  const store = new SqliteReflectionStore(db);
  const vector = unitVector(256, { 3: 0.3, 17: -0.7, 255: 0.1 });
  await store.upsert([reflection(A, 'r1', 'x', 0, { vector: vector.subarray(0) })]);
  const nearby = await near(store, A, vector, 1);
  let dot = 0;
  for (const v of vector) dot += v * v;
  assert.ok(Math.abs(nearby[0].vectorScore - dot) < 1e-6);
  db.close();
});

sqlite.run();
