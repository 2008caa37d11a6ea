/** Temp-dir SQLite files for the adapter tests: real files, not only `:memory:`. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { openDatabase, type SqliteDatabase } from '../../../src/adapters/sqlite/database.js';
import { SecretBox } from '../../../src/security/secret-box.js';

export interface TempDb {
  dir: string;
  file: string;
  db: SqliteDatabase;
  /** Closes the current handle and opens a new one on the same file. */
  reopen(): SqliteDatabase;
  remove(): void;
}

export function tempDb(): TempDb {
  const dir = mkdtempSync(path.join(tmpdir(), 'engram-sqlite-'));
  const file = path.join(dir, 'engram.db');
  const temp: TempDb = {
    dir,
    file,
    db: openDatabase(file),
    reopen() {
      if (temp.db.open) temp.db.close();
      temp.db = openDatabase(file);
      return temp.db;
    },
    remove() {
      if (temp.db.open) temp.db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return temp;
}

export function testSecretBox(): SecretBox {
  return new SecretBox(randomBytes(32));
}
