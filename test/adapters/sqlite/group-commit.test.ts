/**
 * Group commit: the writes of one event-loop turn share one transaction, each settles
 * once committed, and a write that fails is undone and rejected alone.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import BetterSqlite3 from 'better-sqlite3';
import { GroupCommit } from '../../../src/adapters/sqlite/group-commit.js';

const test = suite('GroupCommit');

function database() {
  const statements: string[] = [];
  const db = new BetterSqlite3(':memory:', { verbose: (sql) => statements.push(String(sql)) });
  db.exec('CREATE TABLE t (x INTEGER UNIQUE)');
  statements.length = 0;
  const insert = db.prepare('INSERT INTO t VALUES (?)');
  const rows = () => db.prepare<[], { x: number }>('SELECT x FROM t ORDER BY x').all().map((row) => row.x);
  return { db, statements, insert, rows };
}

test('the writes issued in one turn of the event loop commit in one transaction, then settle', async () => {
  const { db, statements, insert, rows } = database();
  const group = new GroupCommit(db);
  const writes = [1, 2, 3].map((x) => group.run(() => insert.run(x).changes));
  assert.equal(rows(), [], 'nothing is written before the turn ends');
  assert.equal(await Promise.all(writes), [1, 1, 1]);
  assert.equal(rows(), [1, 2, 3]);
  assert.is(statements.filter((sql) => sql === 'BEGIN').length, 1);
  assert.is(statements.filter((sql) => sql === 'COMMIT').length, 1);
  db.close();
});

test('a write that throws is undone and rejected alone; the others of its group land', async () => {
  const { db, insert, rows } = database();
  insert.run(2);
  const group = new GroupCommit(db);
  const failing = () => {
    insert.run(5);
    insert.run(2); // the unique constraint
  };
  const outcomes = await Promise.allSettled([group.run(() => insert.run(1)), group.run(failing), group.run(() => insert.run(3))]);
  assert.equal(outcomes.map((outcome) => outcome.status), ['fulfilled', 'rejected', 'fulfilled']);
  assert.match(String((outcomes[1] as PromiseRejectedResult).reason), /UNIQUE/);
  assert.equal(rows(), [1, 2, 3], 'the failed write left nothing, not even its first row');
  db.close();
});

test('a lone write that throws is undone whole', async () => {
  const { db, insert, rows } = database();
  insert.run(2);
  const group = new GroupCommit(db);
  const outcome = await group.run(() => (insert.run(5), insert.run(2))).then(() => 'written', (error: unknown) => String(error));
  assert.match(outcome, /UNIQUE/);
  assert.equal(rows(), [2]);
  db.close();
});

test('flush commits at once what waits (before the handle closes)', async () => {
  const { db, insert, rows } = database();
  const group = new GroupCommit(db);
  const write = group.run(() => insert.run(7));
  group.flush();
  assert.equal(rows(), [7]);
  db.close();
  await write;
});

test('writes waiting when the handle is closed are rejected, not lost silently', async () => {
  const { db, insert } = database();
  const group = new GroupCommit(db);
  const write = group.run(() => insert.run(1));
  db.close();
  try {
    await write;
    assert.unreachable('the write must fail');
  } catch (error) {
    assert.match(String(error), /not open/);
  }
});

test.run();
