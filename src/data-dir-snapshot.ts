/**
 * A start that fails leaves the data dir as it found it. Before it creates anything, a
 * start notes which folders of the data dir's path do not exist yet; once it holds the
 * data dir's lock it notes which entries the data dir holds. Should it fail then (its
 * port taken, a store out of reach, a wrong key), it removes what was not there, so a
 * fresh path does not become a data dir with an admin token, a secret key and a database
 * that no server ever used, and a later start does not adopt them as a server's.
 *
 * Only what appeared since is removed, never what was there before. Entries are noted,
 * and removed, only by a start that holds the data dir's lock (the embedded store): no
 * other server writes there meanwhile, so whatever appeared is its own. Without the lock
 * (NATS replicas may share a data dir; the archive commands run beside a server) another
 * process may have created those files at the same moment, and they stay; only empty
 * folders this start made are taken back. `connect()` creates the files it may leave
 * last, after reaching the stores, so that a NATS out of reach leaves none.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface DataDirSnapshot {
  /**
   * Call once the data dir's lock is held: the entries there now are someone else's and
   * stay, except `made`, the names taking the lock created, when they were not there
   * before the snapshot.
   */
  locked(made: string[]): void;
  /**
   * Removes the entries that appeared since `locked()` (none without it), then the
   * folders made for the data dir, while they are empty.
   */
  restore(): void;
}

export function snapshotDataDir(dataDir: string): DataDirSnapshot {
  const dir = path.resolve(dataDir);
  // The data dir and the ancestors `mkdir -p` will make, deepest first.
  const missing: string[] = [];
  for (let at = dir; !fs.existsSync(at); at = path.dirname(at)) {
    missing.push(at);
    if (path.dirname(at) === at) break;
  }
  const before = missing.length > 0 ? new Set<string>() : entriesOf(dir);
  let kept: Set<string> | undefined;
  return {
    locked(made) {
      // Unknown when a listing failed: then nothing in the folder is taken for new.
      const now = entriesOf(dir);
      if (!now || !before) return;
      kept = new Set([...now].filter((name) => !made.includes(name) || before.has(name)));
    },
    restore() {
      if (kept) {
        for (const name of entriesOf(dir) ?? []) if (!kept.has(name)) fs.rmSync(path.join(dir, name), { recursive: true, force: true });
      }
      for (const folder of missing) {
        try {
          fs.rmdirSync(folder);
        } catch {
          // Not empty (someone else's files) or gone: its ancestors stay too.
          return;
        }
      }
    },
  };
}

function entriesOf(dir: string): Set<string> | undefined {
  try {
    return new Set(fs.readdirSync(dir));
  } catch {
    return undefined;
  }
}
