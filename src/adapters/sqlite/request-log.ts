/**
 * The request log in the embedded SQLite file (migration 14, `request_log`). The row's
 * `seq` (AUTOINCREMENT: never reused, even after deletes) is the append order, so the
 * cursor is the last `seq` a page showed and stays valid across pruning. Appends are
 * group-committed (`group-commit.ts`) with the other writes of the turn's end.
 */
import { cursorOf, pageStart } from '../../domain/request-log.js';
import { EngramError } from '../../errors.js';
import type { InjectedReflection, MemorySkipped, RequestEntry, RequestLog, RequestPage } from '../../ports/requests.js';
import type { SqliteDatabase } from './database.js';
import { groupCommitOf, type GroupCommit } from './group-commit.js';

interface Row {
  seq: number;
  id: string;
  agent_id: string;
  at: number;
  protocol: string;
  conversation_id: string | null;
  status: number | null;
  outcome: string;
  latency_ms: number;
  upstream_ms: number | null;
  injected: string;
  scope: string | null;
  user_id: string | null;
  skipped: string | null;
}

const COLUMNS = 'seq, id, agent_id, at, protocol, conversation_id, status, outcome, latency_ms, upstream_ms, injected, scope, user_id, skipped';

/** The SQLite RequestLog; shares the database handle with the other stores and never closes it. */
export class SqliteRequestLog implements RequestLog {
  readonly #group: GroupCommit;
  readonly #sql;

  constructor(db: SqliteDatabase) {
    this.#group = groupCommitOf(db);
    this.#sql = {
      append: db.prepare(
        `INSERT INTO request_log (id, agent_id, at, protocol, conversation_id, status, outcome, latency_ms, upstream_ms, injected, scope, user_id, skipped)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      // Both through the (agent_id, seq) index, newest first.
      list: db.prepare<[string, number, number], Row>(`SELECT ${COLUMNS} FROM request_log WHERE agent_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`),
      get: db.prepare<[string, string], Row>(`SELECT ${COLUMNS} FROM request_log WHERE id = ? AND agent_id = ?`),
      prune: db.prepare<[number]>('DELETE FROM request_log WHERE at < ?'),
      deleteAgent: db.prepare<[string]>('DELETE FROM request_log WHERE agent_id = ?'),
    };
  }

  /** Committed with the other writes of this turn of the event loop (`GroupCommit`). */
  append(entry: RequestEntry): Promise<void> {
    const injected = JSON.stringify(entry.injected.map(({ reflectionId, score, why }) => ({ reflectionId, score, why })));
    return this.#group.run(() => {
      this.#sql.append.run(
        entry.id,
        entry.agentId,
        entry.at,
        entry.protocol,
        entry.conversationId,
        entry.status,
        entry.outcome,
        entry.latencyMs,
        entry.upstreamMs,
        injected,
        entry.scope,
        entry.user,
        entry.skipped,
      );
    });
  }

  async list(agentId: string, options: { limit: number; cursor?: string }): Promise<RequestPage> {
    const { limit } = options;
    const start = pageStart(options);
    if ('problem' in start) throw new EngramError('invalid_request', start.problem, { param: start.param });
    const { below } = start;
    // One row more than asked tells whether an older page exists.
    const rows = this.#sql.list.all(agentId, below, limit + 1);
    const page = rows.slice(0, limit);
    return { entries: page.map(entryOf), ...(rows.length > limit ? { cursor: cursorOf(page[page.length - 1].seq) } : {}) };
  }

  async get(agentId: string, id: string): Promise<RequestEntry | undefined> {
    const row = this.#sql.get.get(id, agentId);
    return row && entryOf(row);
  }

  async prune(before: number): Promise<number> {
    return this.#sql.prune.run(before).changes;
  }

  async deleteAgent(agentId: string): Promise<void> {
    this.#sql.deleteAgent.run(agentId);
  }

  /** Does not close the shared database handle; its opener does (see database.ts). */
  async close(): Promise<void> {}
}

function entryOf(row: Row): RequestEntry {
  return {
    id: row.id,
    agentId: row.agent_id,
    at: row.at,
    protocol: row.protocol,
    conversationId: row.conversation_id,
    status: row.status,
    outcome: row.outcome,
    latencyMs: row.latency_ms,
    upstreamMs: row.upstream_ms,
    injected: JSON.parse(row.injected) as InjectedReflection[],
    scope: row.scope,
    user: row.user_id,
    skipped: row.skipped as MemorySkipped | null,
  };
}
