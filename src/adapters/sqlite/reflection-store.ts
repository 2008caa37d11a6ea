/**
 * Reflection store in the embedded SQLite file: rows with float32 vector BLOBs, one FTS5
 * index per agent for BM25 (keyword-index.ts), and a per-agent in-memory snapshot
 * (agent-snapshot.ts) for brute-force cosine search. Retrieval runs on every proxied
 * request, so a search is: one version check, one SIMD scan of the cached matrix, one
 * FTS5 query, one fetch of the final rows.
 */
import type { Reflection, ScoredReflection } from '../../domain/types.js';
import type {
  HybridQuery,
  ListQuery,
  ReflectionPatch,
  ReflectionStore,
  StoredReflection,
} from '../../memory/ports.js';
import type { SqliteDatabase } from './database.js';
import { relativeScoreFusion, type Candidate } from './fusion.js';
import { AgentSnapshot, documentText, type SnapshotChange, type SnapshotRow } from './agent-snapshot.js';
import { KeywordIndex } from './keyword-index.js';
import { pruneTerms, queryTerms, toFtsMatch } from './keyword-query.js';
import { COLUMNS, storedText, toReflection, vectorBlob, type ReflectionRow } from './reflection-rows.js';
import { KIND_CODES } from './vector-matrix.js';

export interface SqliteReflectionStoreOptions {
  now?: () => number;
  /**
   * Candidates taken from each of the vector and keyword lists before fusion (at least
   * the query's limit). Like Weaviate's hybrid sub-search limit, it sets the population
   * the min-max normalisation is relative to.
   */
  fusionCandidates?: number;
  /** Agents whose snapshot stays in memory; the least recently searched is dropped. */
  cachedAgents?: number;
  /**
   * Upper bound on the keyword postings one query visits (sum of its terms' document
   * frequencies), which bounds BM25 time in large stores; see `pruneTerms`.
   */
  keywordPostingBudget?: number;
}

/** One write's effect on the snapshots: per agent, its new version and the changes. */
type WriteLog = Map<string, { version: number | undefined; changes: SnapshotChange[] }>;

export class SqliteReflectionStore implements ReflectionStore {
  readonly #db: SqliteDatabase;
  readonly #now: () => number;
  readonly #fusionCandidates: number;
  readonly #cachedAgents: number;
  readonly #keywordPostingBudget: number;
  readonly #keywords: KeywordIndex;
  /** Insertion order doubles as recency: a hit is re-inserted at the end. */
  readonly #snapshots = new Map<string, AgentSnapshot>();
  readonly #sql;

  constructor(db: SqliteDatabase, options: SqliteReflectionStoreOptions = {}) {
    this.#db = db;
    this.#now = options.now ?? Date.now;
    this.#fusionCandidates = options.fusionCandidates ?? 100;
    this.#cachedAgents = options.cachedAgents ?? 32;
    this.#keywordPostingBudget = options.keywordPostingBudget ?? 2_000;
    this.#keywords = new KeywordIndex(db);
    this.#sql = {
      upsert: db.prepare<[Record<string, unknown>], { seq: number }>(
        `INSERT INTO reflections (agent_id, id, kind, content, topic, tags, source, created_at, updated_at,
                                  last_used_at, use_count, embedder_id, vector)
         VALUES (@agentId, @id, @kind, @content, @topic, @tags, @source, @createdAt, @updatedAt,
                 @lastUsedAt, @useCount, @embedderId, @vector)
         ON CONFLICT (agent_id, id) DO UPDATE SET
           kind = excluded.kind, content = excluded.content, topic = excluded.topic, tags = excluded.tags,
           source = excluded.source, updated_at = excluded.updated_at, embedder_id = excluded.embedder_id,
           vector = excluded.vector,
           -- Re-extracting a known reflection must not reset how it has been used.
           created_at = MIN(created_at, excluded.created_at),
           use_count = MAX(use_count, excluded.use_count),
           last_used_at = MAX(COALESCE(last_used_at, excluded.last_used_at), COALESCE(excluded.last_used_at, last_used_at))
         RETURNING seq`,
      ),
      existing: db.prepare<[string, string], { seq: number; content: string; topic: string; tags: string }>(
        'SELECT seq, content, topic, tags FROM reflections WHERE agent_id = ? AND id = ?',
      ),
      get: db.prepare<[string, string], ReflectionRow>(`SELECT ${COLUMNS} FROM reflections WHERE agent_id = ? AND id = ?`),
      list: db.prepare<[{ agentId: string; kind: string | null; limit: number; offset: number }], ReflectionRow>(
        `SELECT ${COLUMNS} FROM reflections WHERE agent_id = @agentId AND (@kind IS NULL OR kind = @kind)
         ORDER BY updated_at DESC, seq DESC LIMIT @limit OFFSET @offset`,
      ),
      count: db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM reflections WHERE agent_id = ?'),
      update: db.prepare(
        `UPDATE reflections SET kind = @kind, content = @content, topic = @topic, tags = @tags,
           embedder_id = @embedderId, vector = COALESCE(@vector, vector), updated_at = @updatedAt
         WHERE agent_id = @agentId AND id = @id`,
      ),
      delete: db.prepare('DELETE FROM reflections WHERE agent_id = ? AND id = ?'),
      deleteAgent: db.prepare('DELETE FROM reflections WHERE agent_id = ?'),
      markUsed: db.prepare(
        `UPDATE reflections SET use_count = use_count + 1, last_used_at = MAX(COALESCE(last_used_at, @at), @at)
         WHERE agent_id = @agentId AND id = @id`,
      ),
      snapshot: db.prepare<[string], SnapshotRow>(
        'SELECT seq, kind, vector, content, topic, tags FROM reflections WHERE agent_id = ?',
      ),
      bySeqs: db.prepare<[string, string], ReflectionRow>(
        // CROSS JOIN fixes the order: look up each wanted seq by primary key, rather than
        // scan the agent's rows and probe the list.
        `SELECT ${COLUMNS.split(', ').map((column) => `r.${column}`).join(', ')}
         FROM json_each(?) AS j CROSS JOIN reflections AS r ON r.seq = j.value WHERE r.agent_id = ?`,
      ),
    };
  }

  async upsert(reflections: StoredReflection[]): Promise<void> {
    if (reflections.length === 0) return;
    this.#write((log) => {
      for (const r of reflections) {
        const changes = this.#touch(log, r.agentId, true);
        const existing = this.#sql.existing.get(r.agentId, r.id);
        const vector = vectorBlob(r.vector);
        const written = this.#sql.upsert.get({
          agentId: r.agentId,
          id: r.id,
          kind: r.kind,
          content: r.content,
          topic: r.topic,
          tags: JSON.stringify(r.tags),
          source: r.source,
          createdAt: r.createdAt,
          updatedAt: r.updatedAt,
          lastUsedAt: r.lastUsedAt,
          useCount: r.useCount,
          embedderId: r.embedderId,
          vector,
        });
        if (!written) throw new Error(`upsert of reflection ${r.id} returned no row`);
        if (existing) this.#keywords.remove(r.agentId, existing.seq);
        this.#keywords.add(r.agentId, written.seq, r);
        changes.push({
          type: 'put',
          seq: written.seq,
          kind: r.kind,
          vector,
          before: existing && storedText(existing),
          after: documentText(r),
        });
      }
    });
  }

  async get(agentId: string, id: string): Promise<Reflection | undefined> {
    const row = this.#sql.get.get(agentId, id);
    return row && toReflection(row);
  }

  async list(agentId: string, query: ListQuery = {}): Promise<Reflection[]> {
    const limit = query.limit ?? -1; // SQLite: a negative LIMIT means no limit.
    return this.#sql.list
      .all({ agentId, kind: query.kind ?? null, limit, offset: query.offset ?? 0 })
      .map(toReflection);
  }

  async count(agentId: string): Promise<number> {
    return this.#sql.count.get(agentId)?.n ?? 0;
  }

  async update(agentId: string, id: string, patch: ReflectionPatch): Promise<Reflection | undefined> {
    return this.#write((log) => {
      const row = this.#sql.get.get(agentId, id);
      if (!row) return undefined;
      const current = toReflection(row);
      const next: Reflection = {
        ...current,
        kind: patch.kind ?? current.kind,
        content: patch.content ?? current.content,
        topic: patch.topic ?? current.topic,
        tags: patch.tags ? [...patch.tags] : current.tags,
        embedderId: patch.embedderId ?? current.embedderId,
        updatedAt: Math.max(this.#now(), current.updatedAt),
      };
      const vector = patch.vector && vectorBlob(patch.vector);
      this.#sql.update.run({
        agentId,
        id,
        kind: next.kind,
        content: next.content,
        topic: next.topic,
        tags: JSON.stringify(next.tags),
        embedderId: next.embedderId,
        vector: vector ?? null,
        updatedAt: next.updatedAt,
      });
      this.#keywords.remove(agentId, row.seq);
      this.#keywords.add(agentId, row.seq, next);
      this.#touch(log, agentId, true).push({
        type: 'put',
        seq: row.seq,
        kind: next.kind,
        vector,
        before: documentText(current),
        after: documentText(next),
      });
      return next;
    });
  }

  async delete(agentId: string, id: string): Promise<boolean> {
    return this.#write((log) => {
      const row = this.#sql.existing.get(agentId, id);
      if (!row) return false;
      this.#sql.delete.run(agentId, id);
      this.#keywords.remove(agentId, row.seq);
      this.#touch(log, agentId, false).push({ type: 'remove', seq: row.seq, before: storedText(row) });
      return true;
    });
  }

  async deleteAgent(agentId: string): Promise<void> {
    this.#write((log) => {
      this.#sql.deleteAgent.run(agentId);
      this.#keywords.clear(agentId);
      this.#touch(log, agentId, false);
    });
    // Nothing is left to patch: the next search builds an empty snapshot.
    this.#snapshots.delete(agentId);
  }

  async search(agentId: string, query: HybridQuery): Promise<ScoredReflection[]> {
    const limit = Math.max(0, Math.floor(query.limit));
    if (limit === 0) return [];
    const candidates = Math.max(limit, this.#fusionCandidates);
    const snapshot = this.#snapshot(agentId);
    const { matrix } = snapshot;
    const kindCode = query.kind === undefined ? undefined : KIND_CODES[query.kind];
    const vectorList = matrix.top(query.vector, candidates, kindCode);

    const terms = pruneTerms(
      queryTerms(query.text),
      (term) => snapshot.frequencies.get(term),
      matrix.count,
      this.#keywordPostingBudget,
    );
    const match = toFtsMatch(terms);
    const keywordList: Candidate[] = match
      ? this.#keywords.search(agentId, match, candidates, query.kind).map((hit) => ({
          key: hit.seq,
          // bm25() is lower-is-better; fusion wants higher-is-better.
          score: -hit.bm25,
        }))
      : [];

    const fused = relativeScoreFusion(vectorList, keywordList, query.alpha ?? 0.5).slice(0, limit);
    const rawCosine = new Map(vectorList.map((c) => [c.key, c.score]));
    return this.#scored(agentId, fused, (seq) => {
      const known = rawCosine.get(seq);
      if (known !== undefined) return known;
      const row = matrix.rowOfSeq.get(seq);
      return row === undefined ? 0 : matrix.cosineAt(row, query.vector);
    });
  }

  /** Scores are raw cosine similarities (`score` = `vectorScore`), not fused ones. */
  async nearest(agentId: string, vector: Float32Array, limit: number): Promise<ScoredReflection[]> {
    const top = this.#snapshot(agentId).matrix.top(vector, Math.max(0, Math.floor(limit)));
    const cosine = new Map(top.map((c) => [c.key, c.score]));
    return this.#scored(
      agentId,
      top.map((c) => ({ key: c.key, score: c.score, keyword: 0 })),
      (seq) => cosine.get(seq) ?? 0,
    );
  }

  async markUsed(agentId: string, ids: string[], at: number): Promise<void> {
    if (ids.length === 0) return;
    // Usage is not part of any snapshot: no version change, no cache invalidation.
    this.#db.transaction(() => {
      for (const id of new Set(ids)) this.#sql.markUsed.run({ agentId, id, at });
    })();
  }

  /** Drops the caches; does not close the shared database handle (see database.ts). */
  async close(): Promise<void> {
    this.#snapshots.clear();
    this.#keywords.forget();
  }

  /**
   * Runs a write in one IMMEDIATE transaction (no other writer can slip in between
   * reading and bumping an agent's version), then patches this process's snapshots.
   */
  #write<T>(work: (log: WriteLog) => T): T {
    const log: WriteLog = new Map();
    let result: T;
    try {
      result = this.#db.transaction(() => work(log)).immediate();
    } catch (error) {
      // The rollback may have undone a tenant table whose statements were cached.
      this.#keywords.forget();
      throw error;
    }
    for (const [agentId, { version, changes }] of log) {
      const snapshot = this.#snapshots.get(agentId);
      if (snapshot && (version === undefined || !snapshot.apply(version, changes))) this.#snapshots.delete(agentId);
    }
    return result;
  }

  /** The agent's change list in this write; the first call bumps its version. */
  #touch(log: WriteLog, agentId: string, create: boolean): SnapshotChange[] {
    let entry = log.get(agentId);
    if (!entry) {
      entry = { version: this.#keywords.touch(agentId, create), changes: [] };
      log.set(agentId, entry);
    }
    return entry.changes;
  }

  /** The agent's snapshot, rebuilt when another connection changed its reflections. */
  #snapshot(agentId: string): AgentSnapshot {
    const version = this.#keywords.version(agentId);
    const cached = this.#snapshots.get(agentId);
    if (cached && cached.version === version) {
      this.#snapshots.delete(agentId);
      this.#snapshots.set(agentId, cached);
      return cached;
    }
    // Version and rows read in one transaction so they describe the same state.
    const snapshot = this.#db.transaction(
      () => new AgentSnapshot(this.#sql.snapshot.all(agentId), this.#keywords.version(agentId)),
    )();
    this.#snapshots.delete(agentId);
    this.#snapshots.set(agentId, snapshot);
    while (this.#snapshots.size > this.#cachedAgents) {
      const oldest = this.#snapshots.keys().next().value;
      if (oldest === undefined) break;
      this.#snapshots.delete(oldest);
    }
    return snapshot;
  }

  /** Fetches the final rows in one query and attaches their scores, keeping the order. */
  #scored(
    agentId: string,
    ranked: readonly { key: number; score: number; keyword: number }[],
    vectorScore: (seq: number) => number,
  ): ScoredReflection[] {
    if (ranked.length === 0) return [];
    const rows = new Map<number, ReflectionRow>();
    for (const row of this.#sql.bySeqs.all(JSON.stringify(ranked.map((c) => c.key)), agentId)) {
      rows.set(row.seq, row);
    }
    const out: ScoredReflection[] = [];
    for (const candidate of ranked) {
      const row = rows.get(candidate.key);
      if (!row) continue; // deleted by another connection since the snapshot was built
      out.push({
        reflection: toReflection(row),
        score: candidate.score,
        vectorScore: vectorScore(candidate.key),
        keywordScore: candidate.keyword,
      });
    }
    return out;
  }
}
