import { hybridSearch } from '../../../src/memory/hybrid-search.js';
import { statSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import BetterSqlite3 from 'better-sqlite3';
import { openDatabase, SchemaVersionError } from '../../../src/adapters/sqlite/database.js';
import { MIGRATIONS } from '../../../src/adapters/sqlite/migrations.js';
import { SqliteReflectionStore } from '../../../src/adapters/sqlite/reflection-store.js';
import { unitVector } from '../../contracts/helpers.js';
import { tempDb } from './helpers.js';

const test = suite('openDatabase');

test('a new file: latest schema, WAL, foreign keys, private file mode', () => {
  const temp = tempDb();
  try {
    const { db } = temp;
    assert.is(db.pragma('user_version', { simple: true }), MIGRATIONS.length);
    assert.is(db.pragma('journal_mode', { simple: true }), 'wal');
    assert.is(db.pragma('foreign_keys', { simple: true }), 1);
    assert.is(db.pragma('synchronous', { simple: true }), 1, 'NORMAL');
    assert.is(statSync(temp.file).mode & 0o777, 0o600);
    temp.reopen();
    assert.is(temp.db.pragma('user_version', { simple: true }), MIGRATIONS.length, 'reopening migrates nothing');
  } finally {
    temp.remove();
  }
});

test(':memory: works', () => {
  const db = openDatabase(':memory:');
  assert.is(db.pragma('user_version', { simple: true }), MIGRATIONS.length);
  db.close();
});

test('a file from a newer Engram is refused', () => {
  const temp = tempDb();
  try {
    temp.db.pragma(`user_version = ${MIGRATIONS.length + 1}`);
    temp.db.close();
    assert.throws(() => openDatabase(temp.file), (error: unknown) => error instanceof SchemaVersionError);
  } finally {
    temp.remove();
  }
});

test('migration 2 moves reflections written under schema 1 into per-agent keyword indexes', async () => {
  const temp = tempDb();
  const file = path.join(temp.dir, 'from-schema-1.db');
  const old = new BetterSqlite3(file);
  const first = MIGRATIONS[0];
  if (typeof first !== 'string') throw new Error('migration 1 is SQL');
  old.exec(first);
  old.pragma('user_version = 1');
  const insert = old.prepare(
    `INSERT INTO reflections (agent_id, id, kind, content, topic, tags, source, created_at, updated_at, embedder_id, vector)
     VALUES (?, ?, 'factual', ?, 'topic', ?, 'conversation', 1, 1, 'e', ?)`,
  );
  const blob = (v: Float32Array): Buffer => Buffer.from(v.buffer);
  insert.run('agt_a', 'r1', 'the deploy uses kubernetes', '["infra"]', blob(unitVector(8, { 0: 1 })));
  insert.run('agt_a', 'r2', 'lunch at noon', '[]', blob(unitVector(8, { 1: 1 })));
  insert.run('agt_b', 'r1', 'kubernetes for agent b', '[]', blob(unitVector(8, { 2: 1 })));
  old.close();
  try {
    const db = openDatabase(file);
    temp.db.close();
    temp.db = db; // closed by remove()
    assert.is(db.pragma('user_version', { simple: true }), MIGRATIONS.length);
    const store = new SqliteReflectionStore(db);
    const found = await hybridSearch(store, 'agt_a', { text: 'kubernetes', vector: unitVector(8, { 7: 1 }), limit: 5 });
    assert.equal(found.filter((r) => r.keywordScore > 0).map((r) => r.reflection.id), ['r1']);
    const byTag = await hybridSearch(store, 'agt_a', { text: 'infra', vector: unitVector(8, { 7: 1 }), limit: 1 });
    assert.is(byTag[0].reflection.id, 'r1');
    const b = await hybridSearch(store, 'agt_b', { text: 'kubernetes', vector: unitVector(8, { 7: 1 }), limit: 5 });
    assert.equal(b.map((r) => [r.reflection.agentId, r.reflection.id]), [['agt_b', 'r1']]);
    await store.upsert([
      {
        id: 'r3', agentId: 'agt_a', kind: 'procedural', content: 'kubernetes again', topic: 't', tags: [],
        source: 'mcp', createdAt: 2, updatedAt: 2, lastUsedAt: null, useCount: 0, embedderId: 'e',
        vector: unitVector(8, { 3: 1 }),
      },
    ]);
    assert.is((await hybridSearch(store, 'agt_a', { text: 'kubernetes', vector: unitVector(8, { 7: 1 }), limit: 5 })).length, 3);
  } finally {
    temp.remove();
  }
});

test('migration 3 drops the per-agent FTS5 tables and keeps conversations in a rowid table', async () => {
  const temp = tempDb();
  const file = path.join(temp.dir, 'from-schema-2.db');
  const old = new BetterSqlite3(file);
  for (const [i, migration] of MIGRATIONS.slice(0, 2).entries()) {
    if (typeof migration === 'string') old.exec(migration);
    else migration(old);
    old.pragma(`user_version = ${i + 1}`);
  }
  old.exec(`INSERT INTO reflection_tenants (agent_id, version) VALUES ('agt_a', 1)`);
  old.exec(`CREATE VIRTUAL TABLE reflections_fts_1 USING fts5(content, topic, tags, content = '', contentless_delete = 1)`);
  old.prepare('INSERT INTO conversations (agent_id, id, state, updated_at) VALUES (?, ?, ?, ?)').run('agt_a', 'c1', '{"n":1}', 5);
  old.close();
  try {
    const db = openDatabase(file);
    temp.db.close();
    temp.db = db; // closed by remove()
    const names = db.prepare(`SELECT name FROM sqlite_master WHERE name LIKE 'reflections_fts%'`).pluck().all();
    assert.equal(names, []);
    const sql = db.prepare(`SELECT sql FROM sqlite_master WHERE name = 'conversations'`).pluck().get() as string;
    assert.not.match(sql, /WITHOUT ROWID/i);
    assert.equal(db.prepare('SELECT agent_id, id, state, updated_at FROM conversations').all(), [
      { agent_id: 'agt_a', id: 'c1', state: '{"n":1}', updated_at: 5 },
    ]);
    assert.throws(() =>
      db.prepare('INSERT INTO conversations (agent_id, id, state, updated_at) VALUES (?, ?, ?, ?)').run('agt_a', 'c1', '{}', 6),
    );
  } finally {
    temp.remove();
  }
});

test('migration 12 adds supersession and tag authors; existing tags get the presumed author', async () => {
  const temp = tempDb();
  const file = path.join(temp.dir, 'from-schema-11.db');
  const old = new BetterSqlite3(file);
  for (const [i, migration] of MIGRATIONS.slice(0, 11).entries()) {
    if (typeof migration === 'string') old.exec(migration);
    else migration(old);
    old.pragma(`user_version = ${i + 1}`);
  }
  const insert = old.prepare(
    `INSERT INTO reflections (agent_id, id, kind, content, topic, tags, source, created_at, updated_at, embedder_id, vector)
     VALUES ('agt_a', ?, 'factual', ?, 'topic', ?, ?, 1, ?, 'e', ?)`,
  );
  const rows: Array<[id: string, tags: string[], source: string]> = [
    ['learnt', ['deploys'], 'conversation'],
    ['uploaded', ['ci'], 'transcript'],
    ['remembered', ['lint'], 'mcp'],
    ['added', ['pnpm', 'added-by-hand'], 'mcp'],
    ['edited', ['edited-by-hand', 'redis'], 'conversation'],
    ['marker-only', ['added-by-hand'], 'mcp'],
    ['untagged', [], 'conversation'],
  ];
  for (const [i, [id, tags, source]] of rows.entries()) {
    insert.run(id, `content of ${id}`, JSON.stringify(tags), source, 100 - i, Buffer.from(unitVector(8, { [i]: 1 }).buffer));
  }
  old.close();
  try {
    const db = openDatabase(file);
    temp.db.close();
    temp.db = db; // closed by remove()
    assert.is(db.pragma('user_version', { simple: true }), MIGRATIONS.length);
    const authors = db.prepare('SELECT id, tags_by, superseded_by, superseded_at FROM reflections ORDER BY seq').all();
    assert.equal(authors, [
      { id: 'learnt', tags_by: 'extraction', superseded_by: null, superseded_at: null },
      { id: 'uploaded', tags_by: 'extraction', superseded_by: null, superseded_at: null },
      { id: 'remembered', tags_by: 'agent', superseded_by: null, superseded_at: null },
      { id: 'added', tags_by: 'person', superseded_by: null, superseded_at: null },
      { id: 'edited', tags_by: 'person', superseded_by: null, superseded_at: null },
      { id: 'marker-only', tags_by: null, superseded_by: null, superseded_at: null },
      { id: 'untagged', tags_by: null, superseded_by: null, superseded_at: null },
    ]);
    const store = new SqliteReflectionStore(db);
    assert.is((await store.get('agt_a', 'learnt'))?.tagsBy, 'extraction');
    assert.not.ok('supersededBy' in ((await store.get('agt_a', 'learnt')) ?? {}));
    assert.equal((await store.list('agt_a', { needsTags: true })).map((r) => r.id), ['marker-only', 'untagged']);
    assert.is((await store.nearest('agt_a', { vector: unitVector(8, { 0: 1 }), limit: 7 })).length, 7, 'every old row is current');
    await store.close();
  } finally {
    temp.remove();
  }
});

test.run();
