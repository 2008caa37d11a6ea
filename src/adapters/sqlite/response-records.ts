/** Responses chains in the embedded SQLite file; `sealed` arrives encrypted and is stored as given. */
import type { ResponseStore, StoredResponse } from '../../ports/responses.js';
import type { SqliteDatabase } from './database.js';

export class SqliteResponseStore implements ResponseStore {
  readonly #sql;

  constructor(db: SqliteDatabase) {
    this.#sql = {
      put: db.prepare(
        `INSERT INTO responses (agent_id, id, conversation_id, previous_id, created_at, sealed) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (agent_id, id) DO UPDATE SET conversation_id = excluded.conversation_id,
           previous_id = excluded.previous_id, created_at = excluded.created_at, sealed = excluded.sealed`,
      ),
      // Named as the port's record, in its order: the row is the record.
      get: db.prepare<[string, string], StoredResponse>(
        `SELECT id, agent_id AS agentId, conversation_id AS conversationId, previous_id AS previousResponseId,
                created_at AS createdAt, sealed
         FROM responses WHERE agent_id = ? AND id = ?`,
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
    return this.#sql.get.get(agentId, id);
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
