/**
 * The one SQLite file of the embedded deployment: control store, reflection store and
 * event bus share it (DESIGN section 2).
 *
 * Ownership: whoever calls `openDatabase` owns the handle and closes it, after closing
 * the adapters built on it. The adapters' own `close()` releases what they hold
 * (consumers, caches) but never closes the shared handle, so several adapters can share
 * one handle and be closed in any order. `openSqliteAdapters` (index.ts) wires this up.
 */
import { closeSync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { MIGRATIONS } from './migrations.js';

export type SqliteDatabase = BetterSqlite3.Database;

export class SchemaVersionError extends Error {
  override name = 'SchemaVersionError';
}

/** How long a writer waits for another connection's write lock before SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 5_000;

/** Opens (creating if needed) the database file and brings its schema up to date. `':memory:'` works too. */
export function openDatabase(file: string): SqliteDatabase {
  const inMemory = file === ':memory:' || file === '';
  if (!inMemory) createPrivateFile(file);
  const db = new BetterSqlite3(file);
  try {
    // WAL: readers never block the writer, and NORMAL sync is durable across process
    // crashes (only an OS crash can lose the last transactions).
    if (!inMemory) db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    // Deleted rows (an acked extraction job, a deleted reflection) are overwritten, not
    // left readable in free pages. Old page versions stay in the WAL until a checkpoint.
    db.pragma('secure_delete = ON');
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    migrate(db);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

/** Applies the migrations the file has not seen yet, each in its own transaction. */
export function migrate(db: SqliteDatabase): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new SchemaVersionError(
      `Database schema version ${current} is newer than this Engram (knows ${MIGRATIONS.length}); upgrade Engram`,
    );
  }
  for (let version = current + 1; version <= MIGRATIONS.length; version++) {
    // IMMEDIATE: two processes starting at once must not both apply a migration.
    db.transaction(() => {
      const now = db.pragma('user_version', { simple: true }) as number;
      if (now >= version) return;
      const migration = MIGRATIONS[version - 1];
      if (typeof migration === 'string') db.exec(migration);
      else migration(db);
      db.pragma(`user_version = ${version}`);
    }).immediate();
  }
}

/** Creates the file and its folder unless they exist, owner-only: the database holds conversations and secrets. */
export function createPrivateFile(file: string): void {
  mkdirSync(path.dirname(path.resolve(file)), { recursive: true, mode: 0o700 });
  try {
    closeSync(openSync(file, 'wx', 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}
