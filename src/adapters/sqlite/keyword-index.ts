/**
 * Per-agent FTS5 indexes over reflections (content, topic, tags), like Weaviate's one
 * tenant per agent: a keyword query only ever touches its own agent's postings, BM25's
 * statistics (IDF, average length) are the agent's own, and no join is needed to keep
 * other agents out. Tables are contentless with `contentless_delete`, so a row is removed
 * by rowid alone; rows are maintained here, in the same transaction as the
 * `reflections` write, by SqliteReflectionStore.
 *
 * `reflection_tenants.version` changes with every write to an agent's reflections (from
 * any connection): caches built from an older version are stale.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteDatabase } from './database.js';

export interface KeywordDocument {
  content: string;
  topic: string;
  tags: readonly string[];
}

export interface KeywordHit {
  seq: number;
  /** FTS5 bm25(): lower is better. */
  bm25: number;
}

interface Tenant {
  insert: BetterSqlite3.Statement<[number, string, string, string]>;
  remove: BetterSqlite3.Statement<[number]>;
  clear: BetterSqlite3.Statement<[]>;
  search: BetterSqlite3.Statement<[{ match: string; limit: number }], KeywordHit>;
  searchKind: BetterSqlite3.Statement<[{ match: string; limit: number; kind: string }], KeywordHit>;
}

export class KeywordIndex {
  readonly #db: SqliteDatabase;
  readonly #cacheSize: number;
  /** Prepared statements per agent; insertion order doubles as recency. */
  readonly #tenants = new Map<string, Tenant>();
  readonly #sql;

  constructor(db: SqliteDatabase, cacheSize = 64) {
    this.#db = db;
    this.#cacheSize = cacheSize;
    this.#sql = {
      tenant: db.prepare<[string], { n: number; version: number }>(
        'SELECT n, version FROM reflection_tenants WHERE agent_id = ?',
      ),
      createTenant: db.prepare<[string], { n: number }>(
        'INSERT INTO reflection_tenants (agent_id, version) VALUES (?, 0) RETURNING n',
      ),
      bump: db.prepare<[string], { version: number }>(
        'UPDATE reflection_tenants SET version = version + 1 WHERE agent_id = ? RETURNING version',
      ),
    };
  }

  /** 0 for an agent that never had reflections. */
  version(agentId: string): number {
    return this.#sql.tenant.get(agentId)?.version ?? 0;
  }

  /**
   * Marks the agent's reflections as changed and returns the new version; `create`
   * registers an agent seen for the first time (undefined otherwise). Call inside the
   * writing transaction, before the agent's first `add`.
   */
  touch(agentId: string, create: boolean): number | undefined {
    if (!this.#tenant(agentId, create)) return undefined;
    return this.#sql.bump.get(agentId)?.version;
  }

  /** Call inside the writing transaction. */
  add(agentId: string, seq: number, doc: KeywordDocument): void {
    this.#tenant(agentId, true)?.insert.run(seq, doc.content, doc.topic, doc.tags.join(' '));
  }

  /** Call inside the writing transaction. */
  remove(agentId: string, seq: number): void {
    this.#tenant(agentId, false)?.remove.run(seq);
  }

  /** Empties the agent's index (the table stays: other connections may hold statements on it). */
  clear(agentId: string): void {
    this.#tenant(agentId, false)?.clear.run();
  }

  /**
   * Drops cached statements. Called when a write transaction rolls back, since it may
   * have rolled back the creation of a table whose statements were cached.
   */
  forget(): void {
    this.#tenants.clear();
  }

  /** Best `limit` matches, best first. `match` must come from `toFtsMatch`. */
  search(agentId: string, match: string, limit: number, kind?: string): KeywordHit[] {
    const tenant = this.#tenant(agentId, false);
    if (!tenant) return [];
    return kind === undefined ? tenant.search.all({ match, limit }) : tenant.searchKind.all({ match, limit, kind });
  }

  #tenant(agentId: string, create: boolean): Tenant | undefined {
    const cached = this.#tenants.get(agentId);
    if (cached) {
      this.#tenants.delete(agentId);
      this.#tenants.set(agentId, cached);
      return cached;
    }
    let n = this.#sql.tenant.get(agentId)?.n;
    if (n === undefined) {
      if (!create) return undefined;
      n = this.#sql.createTenant.get(agentId)?.n;
      if (n === undefined) throw new Error(`could not register reflection tenant for ${agentId}`);
      createKeywordTable(this.#db, n);
    }
    const tenant = this.#prepare(keywordTableName(n));
    this.#tenants.set(agentId, tenant);
    while (this.#tenants.size > this.#cacheSize) {
      const oldest = this.#tenants.keys().next().value;
      if (oldest === undefined) break;
      this.#tenants.delete(oldest);
    }
    return tenant;
  }

  #prepare(table: string): Tenant {
    const db = this.#db;
    return {
      insert: db.prepare(`INSERT INTO ${table} (rowid, content, topic, tags) VALUES (?, ?, ?, ?)`),
      remove: db.prepare(`DELETE FROM ${table} WHERE rowid = ?`),
      clear: db.prepare(`DELETE FROM ${table}`),
      search: db.prepare(
        `SELECT rowid AS seq, bm25(${table}) AS bm25 FROM ${table} WHERE ${table} MATCH @match
         ORDER BY bm25 LIMIT @limit`,
      ),
      // Kind filters are rare (tools, not the per-request injection), so a join is fine.
      searchKind: db.prepare(
        `SELECT ${table}.rowid AS seq, bm25(${table}) AS bm25
         FROM ${table} JOIN reflections r ON r.seq = ${table}.rowid
         WHERE ${table} MATCH @match AND r.kind = @kind ORDER BY bm25 LIMIT @limit`,
      ),
    };
  }
}

/** The agent's table; `n` is an integer from our own table, so safe in an identifier. */
export function keywordTableName(n: number): string {
  return `reflections_fts_${Math.trunc(n)}`;
}

/**
 * Contentless (the text lives in `reflections`) with `contentless_delete`, so rows are
 * removed by rowid alone. No stemming, like Weaviate's default `word` tokenization.
 */
export function createKeywordTable(db: SqliteDatabase, n: number): void {
  db.exec(
    `CREATE VIRTUAL TABLE ${keywordTableName(n)} USING fts5(
       content, topic, tags,
       content = '', contentless_delete = 1,
       tokenize = 'unicode61 remove_diacritics 2'
     )`,
  );
}
