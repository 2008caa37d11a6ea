/**
 * The embedded deployment in one call: one SQLite file holding the control store, the
 * reflection store and the event bus (DESIGN section 2).
 */
import type { SecretBox } from '../../security/secret-box.js';
import { openDatabase, type SqliteDatabase } from './database.js';
import { SqliteControlStore } from './control-store.js';
import { SqliteEventBus, type SqliteEventBusOptions } from './event-bus.js';
import { SqliteReflectionStore } from './reflection-store.js';

export interface SqliteAdapters {
  db: SqliteDatabase;
  control: SqliteControlStore;
  reflections: SqliteReflectionStore;
  bus: SqliteEventBus;
  /** Stops the bus consumers (waiting for running handlers), then closes the file. */
  close(): Promise<void>;
}

export function openSqliteAdapters(
  file: string,
  secretBox: SecretBox,
  options: { bus?: SqliteEventBusOptions } = {},
): SqliteAdapters {
  const db = openDatabase(file);
  const control = new SqliteControlStore(db, secretBox);
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
        await control.close();
        db.close();
      })();
      return closing;
    },
  };
}

export { openDatabase, type SqliteDatabase } from './database.js';
export { SqliteControlStore } from './control-store.js';
export { SqliteEventBus, DEFAULT_CONSUMER_OPTIONS } from './event-bus.js';
export { SqliteReflectionStore } from './reflection-store.js';
