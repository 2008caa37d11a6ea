/**
 * Response chains in the embedded SQLite file (part of the control store). A record
 * holds the conversation in clear, so its content is sealed with the SecretBox, bound
 * to the agent and the response id: a row copied onto another record fails to open.
 */
import type { ResponseRecord } from '../../domain/response-record.js';
import type { SecretBox } from '../../security/secret-box.js';
import type { SqliteDatabase } from './database.js';

interface ResponseRow {
  agent_id: string;
  id: string;
  conversation_id: string;
  previous_id: string | null;
  created_at: number;
  sealed: string;
}

type SealedPart = Pick<ResponseRecord, 'input' | 'output' | 'body'>;

export class SqliteResponseRecords {
  readonly #box: SecretBox;
  readonly #sql;

  constructor(db: SqliteDatabase, box: SecretBox) {
    this.#box = box;
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
      deleteOrg: db.prepare('DELETE FROM responses WHERE agent_id IN (SELECT id FROM agents WHERE org_id = ?)'),
      prune: db.prepare('DELETE FROM responses WHERE created_at < ?'),
    };
  }

  put(record: ResponseRecord): void {
    const part: SealedPart = { input: record.input, output: record.output, body: record.body };
    const sealed = this.#box.encrypt(JSON.stringify(part), context(record.agentId, record.id));
    this.#sql.put.run(record.agentId, record.id, record.conversationId, record.previousResponseId, record.createdAt, sealed);
  }

  get(agentId: string, id: string): ResponseRecord | undefined {
    const row = this.#sql.get.get(agentId, id);
    if (!row) return undefined;
    const part = JSON.parse(this.#box.decrypt(row.sealed, context(agentId, id))) as SealedPart;
    return {
      id: row.id,
      agentId: row.agent_id,
      conversationId: row.conversation_id,
      previousResponseId: row.previous_id,
      createdAt: row.created_at,
      ...part,
    };
  }

  delete(agentId: string, id: string): boolean {
    return this.#sql.delete.run(agentId, id).changes > 0;
  }

  deleteAgent(agentId: string): void {
    this.#sql.deleteAgent.run(agentId);
  }

  /** Must run before the org's agents are deleted. */
  deleteOrg(orgId: string): void {
    this.#sql.deleteOrg.run(orgId);
  }

  prune(createdBefore: number): number {
    return this.#sql.prune.run(createdBefore).changes;
  }
}

function context(agentId: string, id: string): string {
  return `response:${agentId}:${id}`;
}
