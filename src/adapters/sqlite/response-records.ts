/** Responses chains in the embedded SQLite file; `sealed` arrives encrypted and is stored as given. */
import type { ResponseStore, StoredResponse } from '../../ports/responses.js';
import type { SqliteDatabase } from './database.js';

interface ResponseRow {
  agent_id: string;
  id: string;
  conversation_id: string;
  previous_id: string | null;
  created_at: number;
  sealed: string;
}

export class SqliteResponseStore implements ResponseStore {
  readonly #sql;

  constructor(db: SqliteDatabase) {
    this.#sql = {
      put: db.prepare(
        `INSERT INTO responses (agent_id, id, conversation_id, previous_id, created_at, sealed) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (agent_id, id) DO UPDATE SET conversation_id = excluded.conversation_id,
           previous_id = excluded.previous_id, created_at = excluded.created_at, sealed = excluded.sealed`,
      ),
      get: db.prepare<[string, string], ResponseRow>(
        'SELECT agent_id, id, conversation_id, previous_id, created_at, sealed FROM responses WHERE agent_id = ? AND id = ?',
      ),
      delete: db.prepare('DELETE FROM responses WHERE agent_id = ? AND id = ?'),
      deleteAgent: db.prepare('DELETE FROM responses WHERE agent_id = ?'),
      prune: db.prepare('DELETE FROM responses WHERE created_at < ?'),
    };
  }

  async put(record: StoredResponse): Promise<void> {
    this.#sql.put.run(record.agentId, record.id, record.conversationId, record.previousResponseId, record.createdAt, record.sealed);
  }

  async get(agentId: string, id: string): Promise<StoredResponse | undefined> {
    const row = this.#sql.get.get(agentId, id);
    return (
      row && {
        id: row.id,
        agentId: row.agent_id,
        conversationId: row.conversation_id,
        previousResponseId: row.previous_id,
        createdAt: row.created_at,
        sealed: row.sealed,
      }
    );
  }

  async delete(agentId: string, id: string): Promise<boolean> {
    return this.#sql.delete.run(agentId, id).changes > 0;
  }

  async deleteAgent(agentId: string): Promise<void> {
    this.#sql.deleteAgent.run(agentId);
  }

  async prune(createdBefore: number): Promise<number> {
    return this.#sql.prune.run(createdBefore).changes;
  }

  async close(): Promise<void> {}
}
