/**
 * The request log in the embedded SQLite file (migrations 14, 17, 18, 20: `request_log`). The
 * row's `seq` (AUTOINCREMENT: never reused, even after deletes) is the append order, so the
 * cursor is the last `seq` a page showed and stays valid across pruning, whatever filter
 * the pages are read with. Appends are group-committed (`group-commit.ts`) with the other
 * writes of the turn's end.
 */
import { cursorOf, pageStart } from '../../domain/request-log.js';
import { EngramError } from '../../errors.js';
import type { RequestEntry, RequestFilter, RequestLog, RequestPage } from '../../ports/requests.js';
import { storedEntry } from '../request-entries.js';
import type { SqliteDatabase } from './database.js';
import { groupCommitOf, type GroupCommit } from './group-commit.js';

/** A row named as the entry, in its order; its lists are JSON text. */
type Row = Omit<RequestEntry, 'injected' | 'kept' | 'rebuilt' | 'nearMisses'> & {
  seq: number;
  injected: string;
  kept: string;
  rebuilt: string | null;
  nearMisses: string;
};

const COLUMNS =
  'seq, id, agent_id AS agentId, at, protocol, conversation_id AS conversationId, status, outcome, latency_ms AS latencyMs, ' +
  'upstream_ms AS upstreamMs, injected, kept, rebuilt, reason, bar, near_misses AS nearMisses, scope, user_id AS user, ' +
  'answer_limit AS answerLimit';

/**
 * `RequestFilter` in SQL, as `matchesFilter` (`request-entries.ts`) states it: an empty
 * `injected` list is stored as `[]` exactly (JSON.stringify), so "nothing added" is a
 * string comparison, no JSON parsed per row.
 */
const FILTERS = [
  ['conversationId', 'conversation_id = @conversationId'],
  ['outcome', 'outcome = @outcome'],
] as const;

/** The SQLite RequestLog; shares the database handle with the other stores and never closes it. */
export class SqliteRequestLog implements RequestLog {
  readonly #db: SqliteDatabase;
  readonly #group: GroupCommit;
  readonly #sql;
  /** One statement per shape of filter (which of its fields are set): at most eight. */
  readonly #lists = new Map<string, ReturnType<SqliteDatabase['prepare']>>();

  constructor(db: SqliteDatabase) {
    this.#db = db;
    this.#group = groupCommitOf(db);
    this.#sql = {
      append: db.prepare(
        `INSERT INTO request_log (id, agent_id, at, protocol, conversation_id, status, outcome, latency_ms, upstream_ms, injected, kept, rebuilt, reason, bar, near_misses, scope, user_id, answer_limit)
         VALUES (@id, @agentId, @at, @protocol, @conversationId, @status, @outcome, @latencyMs, @upstreamMs, @injected, @kept,
                 @rebuilt, @reason, @bar, @nearMisses, @scope, @user, @answerLimit)`,
      ),
      get: db.prepare<[string, string], Row>(`SELECT ${COLUMNS} FROM request_log WHERE id = ? AND agent_id = ?`),
      prune: db.prepare<[number]>('DELETE FROM request_log WHERE at < ?'),
      deleteAgent: db.prepare<[string]>('DELETE FROM request_log WHERE agent_id = ?'),
    };
  }

  /** Committed with the other writes of this turn of the event loop (`GroupCommit`). */
  append(entry: RequestEntry): Promise<void> {
    const stored = storedEntry(entry);
    return this.#group.run(() => {
      this.#sql.append.run({
        ...stored,
        injected: JSON.stringify(stored.injected),
        kept: JSON.stringify(stored.kept),
        rebuilt: stored.rebuilt === null ? null : JSON.stringify(stored.rebuilt),
        nearMisses: JSON.stringify(stored.nearMisses),
      });
    });
  }

  async list(agentId: string, options: { limit: number; cursor?: string } & RequestFilter): Promise<RequestPage> {
    const { limit } = options;
    const start = pageStart(options);
    if ('problem' in start) throw new EngramError('invalid_request', start.problem, { param: start.param });
    const { below } = start;
    // One row more than asked tells whether an older page exists.
    const params = { agentId, below, limit: limit + 1, conversationId: options.conversationId, outcome: options.outcome };
    const rows = this.#listStatement(options).all(params) as Row[];
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

  /**
   * Newest first through the (agent_id, seq) index, or (agent_id, conversation_id, seq) for
   * one conversation; the other conditions are checked on the rows that index gives, so a
   * page stops at `limit` matches rather than reading the whole log.
   */
  #listStatement(filter: RequestFilter) {
    const conditions = ['agent_id = @agentId', 'seq < @below'];
    for (const [field, sql] of FILTERS) if (filter[field] !== undefined) conditions.push(sql);
    if (filter.nothingAdded !== undefined) conditions.push(filter.nothingAdded ? "injected = '[]'" : "injected <> '[]'");
    const sql = `SELECT ${COLUMNS} FROM request_log WHERE ${conditions.join(' AND ')} ORDER BY seq DESC LIMIT @limit`;
    let statement = this.#lists.get(sql);
    if (!statement) {
      statement = this.#db.prepare(sql);
      this.#lists.set(sql, statement);
    }
    return statement;
  }
}

function entryOf({ seq: _seq, ...row }: Row): RequestEntry {
  return {
    ...row,
    injected: JSON.parse(row.injected) as RequestEntry['injected'],
    kept: JSON.parse(row.kept) as RequestEntry['kept'],
    rebuilt: row.rebuilt === null ? null : (JSON.parse(row.rebuilt) as RequestEntry['rebuilt']),
    nearMisses: JSON.parse(row.nearMisses) as RequestEntry['nearMisses'],
  };
}
