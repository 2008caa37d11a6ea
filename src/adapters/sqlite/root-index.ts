/** Root memory indexes in the embedded SQLite file, one row per agent. */
import type { RootIndexStore } from '../../ports/root-index.js';
import type { SqliteDatabase } from './database.js';

export class SqliteRootIndexStore implements RootIndexStore {
  readonly #now: () => number;
  readonly #sql;

  constructor(db: SqliteDatabase, now: () => number = Date.now) {
    this.#now = now;
    this.#sql = {
      get: db.prepare<[string], string>('SELECT markdown FROM agent_indexes WHERE agent_id = ?').pluck(),
      put: db.prepare(
        `INSERT INTO agent_indexes (agent_id, markdown, updated_at) VALUES (?, ?, ?)
         ON CONFLICT (agent_id) DO UPDATE SET markdown = excluded.markdown, updated_at = excluded.updated_at`,
      ),
      delete: db.prepare('DELETE FROM agent_indexes WHERE agent_id = ?'),
    };
  }

  async get(agentId: string): Promise<string | undefined> {
    return this.#sql.get.get(agentId);
  }

  async put(agentId: string, markdown: string): Promise<void> {
    this.#sql.put.run(agentId, markdown, this.#now());
  }

  async delete(agentId: string): Promise<void> {
    this.#sql.delete.run(agentId);
  }

  async close(): Promise<void> {}
}
