/**
 * The embedded deployment in one call: one SQLite file holding the control stores, the
 * reflection store and the event bus (DESIGN section 2).
 */
import type { ControlStores } from '../../ports/index.js';
import { SqliteAccountStore } from './accounts.js';
import { SqliteActivityStore } from './activity.js';
import { openDatabase, type SqliteDatabase } from './database.js';
import { SqliteConversationStore } from './conversations.js';
import { SqliteDirectory } from './directory.js';
import { groupCommitOf } from './group-commit.js';
import { SqliteEventBus, type SqliteEventBusOptions } from './event-bus.js';
import { SqliteReflectionStore } from './reflection-store.js';
import { SqliteRequestLog } from './request-log.js';
import { SqliteResponseStore } from './response-records.js';
import { SqliteRootIndexStore } from './root-index.js';

export interface SqliteAdapters {
  db: SqliteDatabase;
  control: ControlStores;
  reflections: SqliteReflectionStore;
  bus: SqliteEventBus;
  /** Stops the bus consumers (waiting for running handlers), then closes the file. */
  close(): Promise<void>;
}

/** The control stores on an open database (closing them leaves the database open). */
export function sqliteControlStores(db: SqliteDatabase): ControlStores {
  return {
    directory: new SqliteDirectory(db),
    conversations: new SqliteConversationStore(db),
    responses: new SqliteResponseStore(db),
    indexes: new SqliteRootIndexStore(db),
    accounts: new SqliteAccountStore(db),
    activity: new SqliteActivityStore(db),
    requests: new SqliteRequestLog(db),
  };
}

export function openSqliteAdapters(file: string, options: { bus?: SqliteEventBusOptions } = {}): SqliteAdapters {
  const db = openDatabase(file);
  const control = sqliteControlStores(db);
  const reflections = new SqliteReflectionStore(db);
  const bus = new SqliteEventBus(db, options.bus);
  let closing: Promise<void> | undefined;
  return {
    db,
    control,
    reflections,
    bus,
    close: () => {
      closing ??= (async () => {
        await bus.close();
        await reflections.close();
        // Writes still waiting for their group's commit land before the file closes.
        groupCommitOf(db).flush();
        db.close();
      })();
      return closing;
    },
  };
}
