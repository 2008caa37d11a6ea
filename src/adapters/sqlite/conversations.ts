/**
 * Conversation state in the embedded SQLite file, revision-checked: a write names the
 * revision it read (`UPDATE ... WHERE revision = ?`), so a request settling and an
 * extraction job moving the watermark never undo each other, in one process or several.
 */
import type { ConversationState } from '../../domain/conversation-state.js';
import type { ConversationStore, Revisioned } from '../../ports/conversations.js';
import type { SqliteDatabase } from './database.js';
import { groupCommitOf, type GroupCommit } from './group-commit.js';
import { isSqliteError } from './sqlite-errors.js';

export class SqliteConversationStore implements ConversationStore {
  readonly #db: SqliteDatabase;
  readonly #group: GroupCommit;
  readonly #sql;

  constructor(db: SqliteDatabase) {
    this.#db = db;
    this.#group = groupCommitOf(db);
    this.#sql = {
      // On every proxied request: one lookup through the (agent_id, id) index.
      get: db.prepare<[string, string], { state: string; revision: number }>(
        'SELECT state, revision FROM conversations WHERE agent_id = ? AND id = ?',
      ),
      insert: db.prepare('INSERT INTO conversations (agent_id, id, state, updated_at, revision) VALUES (?, ?, ?, ?, 1)'),
      update: db.prepare(
        'UPDATE conversations SET state = ?, updated_at = ?, revision = revision + 1 WHERE agent_id = ? AND id = ? AND revision = ?',
      ),
      prune: db.prepare('DELETE FROM conversations WHERE updated_at < ?'),
      pruneSessions: db.prepare('DELETE FROM conversation_sessions WHERE at < ?'),
      deleteAgent: db.prepare('DELETE FROM conversations WHERE agent_id = ?'),
      deleteAgentSessions: db.prepare('DELETE FROM conversation_sessions WHERE agent_id = ?'),
      markSession: db.prepare(
        `INSERT INTO conversation_sessions (agent_id, digest, at) VALUES (?, ?, ?)
         ON CONFLICT (agent_id, digest) DO UPDATE SET at = MAX(at, excluded.at)`,
      ),
      hasSession: db.prepare<[string, string], number>('SELECT 1 FROM conversation_sessions WHERE agent_id = ? AND digest = ?').pluck(),
    };
  }

  async get(agentId: string, id: string): Promise<Revisioned<ConversationState> | undefined> {
    const row = this.#sql.get.get(agentId, id);
    return row && { value: JSON.parse(row.state) as ConversationState, revision: row.revision };
  }

  /** Committed with the other writes of this turn of the event loop (`GroupCommit`). */
  put(state: ConversationState, expected: number | undefined): Promise<number | undefined> {
    const json = JSON.stringify(state);
    return this.#group.run(() => this.#put(state, json, expected));
  }

  #put(state: ConversationState, json: string, expected: number | undefined): number | undefined {
    if (expected === undefined) {
      try {
        this.#sql.insert.run(state.agentId, state.id, json, state.lastActivityAt);
        return 1;
      } catch (error) {
        if (isSqliteError(error, 'SQLITE_CONSTRAINT_UNIQUE') || isSqliteError(error, 'SQLITE_CONSTRAINT_PRIMARYKEY')) return undefined;
        throw error;
      }
    }
    const changed = this.#sql.update.run(json, state.lastActivityAt, state.agentId, state.id, expected).changes;
    return changed > 0 ? expected + 1 : undefined;
  }

  async prune(idleSince: number): Promise<number> {
    return this.#db.transaction(() => {
      this.#sql.pruneSessions.run(idleSince);
      return this.#sql.prune.run(idleSince).changes;
    })();
  }

  async deleteAgent(agentId: string): Promise<void> {
    this.#db.transaction(() => {
      this.#sql.deleteAgent.run(agentId);
      this.#sql.deleteAgentSessions.run(agentId);
    })();
  }

  async markSession(agentId: string, sessionDigest: string, at: number): Promise<void> {
    await this.#group.run(() => this.#sql.markSession.run(agentId, sessionDigest, at));
  }

  async hasSession(agentId: string, sessionDigest: string): Promise<boolean> {
    return this.#sql.hasSession.get(agentId, sessionDigest) !== undefined;
  }

  async close(): Promise<void> {}
}
