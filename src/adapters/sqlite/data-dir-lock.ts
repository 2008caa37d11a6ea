/**
 * One server per data dir: two processes on one embedded SQLite file would each run the
 * extraction queue's consumers and keep their own caches of what the other changes.
 *
 * The lock is SQLite's own file lock (POSIX `fcntl`) on `<data dir>/engram.lock`, held as
 * an open write transaction for as long as the server runs. The kernel drops it when the
 * process ends in any way, `kill -9` included, so there is no stale lock to detect and no
 * pid to trust: a pid file would be fooled by pid reuse, which is the rule in containers
 * (the server is pid 1 again after every restart). better-sqlite3 is already the engine
 * here, so this needs no new dependency. A second connection in the same process is
 * refused too (SQLite tracks its locks per file, not per process).
 *
 * The file stays after the lock is released; it also records which process holds it, for
 * the refusal message. Only a start that fails removes it (with what else it created,
 * `data-dir-snapshot.ts`), while still holding it: a process that opened the file a moment
 * before then cannot write to it once the lock is free (SQLite refuses a write to a
 * file removed since it was opened, SQLITE_READONLY_DBMOVED), and takes the lock again on
 * a new file instead.
 * Network file systems may not honour the lock: keep a data dir on a local disk.
 */
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { StartupError } from '../../errors.js';
import { createPrivateFile } from './database.js';

export const LOCK_FILE = 'engram.lock';

export interface LockHolder {
  pid: number;
  host: string;
  /** ISO time the holder took the lock. */
  since: string;
}

/** A `StartupError`: the CLI prints its message as one line. */
export class DataDirLockedError extends StartupError {
  override name = 'DataDirLockedError';
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder | undefined,
  ) {
    super(lockedMessage(dataDir, holder));
  }
}

export interface DataDirLock {
  readonly file: string;
  /** Lets the next server have the data dir; idempotent. */
  release(): void;
}

/** Takes the data dir's lock, or throws `DataDirLockedError` naming the process that holds it. */
export function lockDataDir(dataDir: string): DataDirLock {
  for (let attempt = 1; ; attempt++) {
    try {
      return lockOnce(dataDir);
    } catch (error) {
      // The file this one opened was removed by a failed start that held it: try the new one.
      if (attempt < 3 && (error as { cause?: { code?: unknown } }).cause?.code === 'SQLITE_READONLY_DBMOVED') continue;
      throw error;
    }
  }
}

function lockOnce(dataDir: string): DataDirLock {
  const file = path.join(dataDir, LOCK_FILE);
  let db: BetterSqlite3.Database;
  try {
    createPrivateFile(file);
    // timeout 0: a held lock answers SQLITE_BUSY at once instead of after a wait.
    db = new BetterSqlite3(file, { timeout: 0 });
  } catch (error) {
    throw cannotLock(dataDir, file, error);
  }
  try {
    // The holder's pid is committed first (readers see only committed rows), then the
    // lock is taken again and kept. Should another process slip in between, the second
    // BEGIN fails and this one is refused: never both.
    db.exec('BEGIN IMMEDIATE');
    db.exec('CREATE TABLE IF NOT EXISTS holder (id INTEGER PRIMARY KEY CHECK (id = 1), pid INTEGER NOT NULL, host TEXT NOT NULL, since TEXT NOT NULL)');
    db.prepare('INSERT OR REPLACE INTO holder (id, pid, host, since) VALUES (1, ?, ?, ?)').run(process.pid, os.hostname(), new Date().toISOString());
    db.exec('COMMIT');
    db.exec('BEGIN IMMEDIATE');
  } catch (error) {
    const holder = isBusy(error) ? readHolder(db) : undefined;
    db.close();
    if (isBusy(error)) throw new DataDirLockedError(dataDir, holder);
    throw cannotLock(dataDir, file, error);
  }
  return {
    file,
    release() {
      // Closing ends the open transaction, which releases the lock.
      if (db.open) db.close();
    },
  };
}

/** A permission, a file that is not Engram's lock, a file system without locks: one line, not a stack. */
function cannotLock(dataDir: string, file: string, error: unknown): StartupError {
  return new StartupError(`Cannot lock the data dir ${dataDir} (${file}): ${(error as Error).message}`, { cause: error });
}

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_') || code === 'SQLITE_LOCKED');
}

function readHolder(db: BetterSqlite3.Database): LockHolder | undefined {
  try {
    if (db.inTransaction) db.exec('ROLLBACK');
    return db.prepare('SELECT pid, host, since FROM holder WHERE id = 1').get() as LockHolder | undefined;
  } catch {
    // The holder is between its commit and its lock, or wrote nothing yet: name no pid.
    return undefined;
  }
}

function lockedMessage(dataDir: string, holder: LockHolder | undefined): string {
  const who = !holder
    ? 'Another Engram'
    : holder.host === os.hostname()
      ? `Another Engram (pid ${holder.pid}, since ${holder.since})`
      : `Another Engram (pid ${holder.pid} on host ${holder.host}, since ${holder.since})`;
  return (
    `${who} is using the data dir ${dataDir}: two servers on one data dir would both run its extraction queue. ` +
    `Stop that one first, or give this one another data dir (--data-dir / ENGRAM_DATA_DIR). ` +
    `Replicas that share their stores run on NATS (ENGRAM_NATS_URL).`
  );
}
