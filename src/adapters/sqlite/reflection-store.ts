/**
 * Reflection store in the embedded SQLite file: rows with float32 vector BLOBs, an FTS5
 * index (external content, kept in step by triggers) for BM25, and a per-agent
 * in-memory vector matrix for brute-force cosine search. Retrieval runs on every
 * proxied request, so a search is: one version check, one scan of the cached matrix,
 * one FTS5 query, one fetch of the final rows.
 */
import type { Reflection, ReflectionKind, ScoredReflection } from '../../domain/types.js';
import type {
  HybridQuery,
  ListQuery,
  ReflectionPatch,
  ReflectionStore,
  StoredReflection,
} from '../../memory/ports.js';
import type { SqliteDatabase } from './database.js';
import { relativeScoreFusion, type Candidate } from './fusion.js';
import { toFtsQuery } from './keyword-query.js';
import { buildMatrix, cosineAt, KIND_CODES, topByVector, type VectorMatrix, type VectorRow } from './vector-matrix.js';

interface ReflectionRow {
  seq: number;
  agent_id: string;
  id: string;
  kind: string;
  content: string;
  topic: string;
  tags: string;
  source: string;
  created_at: number;
  updated_at: number;
  last_used_at: number | null;
  use_count: number;
  embedder_id: string;
}

export interface SqliteReflectionStoreOptions {
  now?: () => number;
  /**
   * Candidates taken from each of the vector and keyword lists before fusion (at least
   * the query's limit). Like Weaviate's hybrid sub-search limit, it sets the population
   * the min-max normalisation is relative to.
   */
  fusionCandidates?: number;
  /** Agents whose vector matrix stays in memory; the least recently searched is dropped. */
  cachedAgents?: number;
}

const COLUMNS =
  'seq, agent_id, id, kind, content, topic, tags, source, created_at, updated_at, last_used_at, use_count, embedder_id';

export class SqliteReflectionStore implements ReflectionStore {
  readonly #db: SqliteDatabase;
  readonly #now: () => number;
  readonly #fusionCandidates: number;
  readonly #cachedAgents: number;
  /** Insertion order doubles as recency: a hit is re-inserted at the end. */
  readonly #matrices = new Map<string, VectorMatrix>();
  readonly #sql;

  constructor(db: SqliteDatabase, options: SqliteReflectionStoreOptions = {}) {
    this.#db = db;
    this.#now = options.now ?? Date.now;
    this.#fusionCandidates = options.fusionCandidates ?? 100;
    this.#cachedAgents = options.cachedAgents ?? 32;
    this.#sql = {
      upsert: db.prepare(
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
           last_used_at = MAX(COALESCE(last_used_at, excluded.last_used_at), COALESCE(excluded.last_used_at, last_used_at))`,
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
      version: db.prepare<[string], { version: number }>('SELECT version FROM reflection_versions WHERE agent_id = ?'),
      vectors: db.prepare<[string], VectorRow>('SELECT seq, kind, vector FROM reflections WHERE agent_id = ?'),
      // The FTS index spans all agents; the join keeps only this agent's rows.
      keyword: db.prepare<
        [{ match: string; agentId: string; kind: string | null; limit: number }],
        { seq: number; bm25: number }
      >(
        `SELECT r.seq AS seq, bm25(reflections_fts) AS bm25
         FROM reflections_fts JOIN reflections r ON r.seq = reflections_fts.rowid
         WHERE reflections_fts MATCH @match AND r.agent_id = @agentId AND (@kind IS NULL OR r.kind = @kind)
         ORDER BY bm25 LIMIT @limit`,
      ),
      bySeqs: db.prepare<[string, string], ReflectionRow>(
        `SELECT ${COLUMNS} FROM reflections WHERE seq IN (SELECT value FROM json_each(?)) AND agent_id = ?`,
      ),
    };
  }

  async upsert(reflections: StoredReflection[]): Promise<void> {
    if (reflections.length === 0) return;
    this.#db.transaction(() => {
      for (const r of reflections) {
        this.#sql.upsert.run({
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
          vector: vectorBlob(r.vector),
        });
      }
    })();
    for (const r of reflections) this.#matrices.delete(r.agentId);
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
    const updated = this.#db.transaction(() => {
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
      this.#sql.update.run({
        agentId,
        id,
        kind: next.kind,
        content: next.content,
        topic: next.topic,
        tags: JSON.stringify(next.tags),
        embedderId: next.embedderId,
        vector: patch.vector ? vectorBlob(patch.vector) : null,
        updatedAt: next.updatedAt,
      });
      return next;
    })();
    this.#matrices.delete(agentId);
    return updated;
  }

  async delete(agentId: string, id: string): Promise<boolean> {
    const deleted = this.#sql.delete.run(agentId, id).changes > 0;
    this.#matrices.delete(agentId);
    return deleted;
  }

  async deleteAgent(agentId: string): Promise<void> {
    this.#sql.deleteAgent.run(agentId);
    this.#matrices.delete(agentId);
  }

  async search(agentId: string, query: HybridQuery): Promise<ScoredReflection[]> {
    const limit = Math.max(0, Math.floor(query.limit));
    if (limit === 0) return [];
    const candidates = Math.max(limit, this.#fusionCandidates);
    const matrix = this.#matrix(agentId);
    const kindCode = query.kind === undefined ? undefined : KIND_CODES[query.kind];
    const vectorList = topByVector(matrix, query.vector, candidates, kindCode);

    const match = toFtsQuery(query.text);
    const keywordList: Candidate[] = match
      ? this.#sql.keyword.all({ match, agentId, kind: query.kind ?? null, limit: candidates }).map((row) => ({
          key: row.seq,
          // bm25() is lower-is-better; fusion wants higher-is-better.
          score: -row.bm25,
        }))
      : [];

    const fused = relativeScoreFusion(vectorList, keywordList, query.alpha ?? 0.5).slice(0, limit);
    const rawCosine = new Map(vectorList.map((c) => [c.key, c.score]));
    return this.#scored(agentId, fused, (seq) => {
      const known = rawCosine.get(seq);
      if (known !== undefined) return known;
      const row = matrix.rowOfSeq.get(seq);
      return row === undefined ? 0 : cosineAt(matrix, row, query.vector);
    });
  }

  /** Scores are raw cosine similarities (`score` = `vectorScore`), not fused ones. */
  async nearest(agentId: string, vector: Float32Array, limit: number): Promise<ScoredReflection[]> {
    const top = topByVector(this.#matrix(agentId), vector, Math.max(0, Math.floor(limit)));
    const cosine = new Map(top.map((c) => [c.key, c.score]));
    return this.#scored(
      agentId,
      top.map((c) => ({ key: c.key, score: c.score, keyword: 0 })),
      (seq) => cosine.get(seq) ?? 0,
    );
  }

  async markUsed(agentId: string, ids: string[], at: number): Promise<void> {
    if (ids.length === 0) return;
    this.#db.transaction(() => {
      for (const id of new Set(ids)) this.#sql.markUsed.run({ agentId, id, at });
    })();
  }

  /** Drops the caches; does not close the shared database handle (see database.ts). */
  async close(): Promise<void> {
    this.#matrices.clear();
  }

  /** The agent's vector matrix, rebuilt when any connection changed its vectors. */
  #matrix(agentId: string): VectorMatrix {
    const version = this.#sql.version.get(agentId)?.version ?? 0;
    const cached = this.#matrices.get(agentId);
    if (cached && cached.version === version) {
      this.#matrices.delete(agentId);
      this.#matrices.set(agentId, cached);
      return cached;
    }
    // Version and rows read in one transaction so they describe the same snapshot.
    const matrix = this.#db.transaction(() => {
      const current = this.#sql.version.get(agentId)?.version ?? 0;
      return buildMatrix(this.#sql.vectors.all(agentId), current);
    })();
    this.#matrices.delete(agentId);
    this.#matrices.set(agentId, matrix);
    while (this.#matrices.size > this.#cachedAgents) {
      const oldest = this.#matrices.keys().next().value;
      if (oldest === undefined) break;
      this.#matrices.delete(oldest);
    }
    return matrix;
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
      if (!row) continue; // deleted by another connection since the matrix was built
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

function vectorBlob(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

function toReflection(row: ReflectionRow): Reflection {
  return {
    id: row.id,
    agentId: row.agent_id,
    kind: row.kind as ReflectionKind,
    content: row.content,
    topic: row.topic,
    tags: JSON.parse(row.tags) as string[],
    source: row.source as Reflection['source'],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    lastUsedAt: row.last_used_at,
    useCount: row.use_count,
    embedderId: row.embedder_id,
  };
}
