/**
 * A consistent copy of the embedded database while the server keeps serving: SQLite's
 * online backup, read through a read-only connection of its own. In WAL mode a reader
 * never blocks the writer, so the server does not notice.
 *
 * The copy is made in one backup step, that is one read transaction: a snapshot. The
 * default of a few pages per step would restart whenever the server writes in between,
 * and a busy server writes all the time.
 */
import { closeSync, existsSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';

export interface BackupResult {
  file: string;
  bytes: number;
  orgs: number;
  agents: number;
  reflections: number;
}

export class BackupError extends Error {
  override name = 'BackupError';
}

/**
 * Copies `database` to `target` (mode 0600; an existing `target` is replaced only once
 * the copy is complete and checked). The copy is one self-contained file: no -wal or -shm
 * beside it.
 */
export async function backupDatabase(database: string, target: string): Promise<BackupResult> {
  if (!existsSync(database)) throw new BackupError(`No database at ${database}`);
  const partial = path.join(path.dirname(path.resolve(target)), `.${path.basename(target)}.partial-${process.pid}`);
  // Created first, so the copy is never readable by others, not even for a moment.
  closeSync(openSync(partial, 'w', 0o600));
  try {
    const source = new BetterSqlite3(database, { readonly: true, fileMustExist: true });
    try {
      await source.backup(partial, { progress: () => 0x7fffffff });
    } finally {
      source.close();
    }
    const copy = new BetterSqlite3(partial);
    let counts: Omit<BackupResult, 'file' | 'bytes'>;
    try {
      // A plain rollback-journal file, whole by itself; the server that opens it turns WAL back on.
      copy.pragma('journal_mode = DELETE');
      const check = copy.pragma('quick_check', { simple: true });
      if (check !== 'ok') throw new BackupError(`The copy failed its check: ${String(check)}`);
      const count = (table: string) => (copy.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
      counts = { orgs: count('orgs'), agents: count('agents'), reflections: count('reflections') };
    } finally {
      copy.close();
    }
    renameSync(partial, target);
    return { file: target, bytes: statSync(target).size, ...counts };
  } catch (error) {
    rmSync(partial, { force: true });
    rmSync(`${partial}-journal`, { force: true });
    throw error;
  }
}
