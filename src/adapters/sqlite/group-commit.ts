/**
 * Group commit: the writes issued on one database handle during one turn of the event
 * loop (every request settling in it: its conversation state, its extraction job, its
 * session mark) are committed together in one transaction, at the end of the turn,
 * instead of one transaction each. A write's promise settles once its transaction has
 * committed, so whoever awaits it knows it is durable, as with a write of its own. Each
 * write runs in its own savepoint: one that throws is undone alone and rejects alone.
 */
import type { SqliteDatabase } from './database.js';

interface Pending {
  write: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export class GroupCommit {
  readonly #db: SqliteDatabase;
  #pending: Pending[] = [];
  #scheduled: NodeJS.Immediate | undefined;

  constructor(db: SqliteDatabase) {
    this.#db = db;
  }

  /** Runs `write` in the next group's transaction; resolves with its result once committed. */
  run<T>(write: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#pending.push({ write, resolve: resolve as (value: unknown) => void, reject });
      this.#scheduled ??= setImmediate(() => this.flush());
    });
  }

  /** Commits what is waiting now (also called before the handle closes). */
  flush(): void {
    if (this.#scheduled) clearImmediate(this.#scheduled);
    this.#scheduled = undefined;
    const batch = this.#pending;
    this.#pending = [];
    if (batch.length === 0) return;
    if (batch.length === 1) {
      const [{ write, resolve, reject }] = batch;
      try {
        resolve(this.#db.transaction(write)());
      } catch (error) {
        reject(error);
      }
      return;
    }
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      this.#db.transaction(() => {
        for (const { write } of batch) {
          try {
            outcomes.push({ ok: true, value: this.#db.transaction(write)() });
          } catch (error) {
            outcomes.push({ ok: false, error });
          }
        }
      })();
    } catch (error) {
      // The commit itself failed (the file is locked or closed): nothing of the group was written.
      for (const { reject } of batch) reject(error);
      return;
    }
    batch.forEach(({ resolve, reject }, i) => {
      const outcome = outcomes[i];
      if (outcome.ok) resolve(outcome.value);
      else reject(outcome.error);
    });
  }
}

const groups = new WeakMap<SqliteDatabase, GroupCommit>();

/** The handle's one group commit, shared by every adapter writing through it. */
export function groupCommitOf(db: SqliteDatabase): GroupCommit {
  let group = groups.get(db);
  if (!group) groups.set(db, (group = new GroupCommit(db)));
  return group;
}
