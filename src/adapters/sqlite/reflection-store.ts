/**
 * Reflection store in the embedded SQLite file: rows with float32 vector BLOBs, plus a
 * per-agent in-memory snapshot (agent-snapshot.ts) holding the vector matrix, a BM25
 * keyword index and the rows. Retrieval runs on every proxied request, so a search is
 * one version check (the only SQL), one SIMD scan of the matrix, one pass over the
 * query terms' postings, and the fusion; results come from the snapshot.
 *
 * `markUsed` also runs on every request: uses are counted in memory and written in one
 * transaction at most every `usageFlushMs` (and before any other write, and on close).
 */
import type { Reflection, Visibility } from '../../domain/types.js';
import { originText } from '../../domain/reflection-origin.js';
import {
  patchedReflection,
  storedSupersession,
  type KeywordQuery,
  type ListQuery,
  type Match,
  type ReflectionPatch,
  type ReflectionStore,
  type StoredReflection,
  type VectorQuery,
} from '../../ports/reflections.js';
import type { SqliteDatabase } from './database.js';
import type { Candidate } from './candidates.js';
import { AgentSnapshot, type SnapshotChange } from './agent-snapshot.js';
import { pruneTerms, queryTerms } from './keyword-query.js';
import { PendingUsage, type Use } from './pending-usage.js';
import {
  COLUMNS,
  CURRENT,
  SNAPSHOT_COLUMNS,
  toReflection,
  toSnapshotEntry,
  vectorBlob,
  type ReflectionRow,
  type SnapshotTuple,
} from './reflection-rows.js';
import { TenantVersions } from './tenant-versions.js';
import { KIND_CODES } from './vector-matrix.js';

export interface SqliteReflectionStoreOptions {
  now?: () => number;
  /** Agents whose snapshot stays in memory; the least recently searched is dropped. */
  cachedAgents?: number;
  /**
   * Reflections held by all cached snapshots together (each costs its vector, its text
   * and its keyword postings, about 2.5 KB at 256 dimensions); beyond it the least
   * recently searched agents are dropped. The snapshot in use is always kept.
   */
  cachedReflections?: number;
  /**
   * Upper bound on the keyword postings one query visits (sum of its terms' document
   * frequencies), which bounds BM25 time in large stores; see `pruneTerms`.
   */
  keywordPostingBudget?: number;
  /** Longest time a `markUsed` waits in memory before it is written (default 1 s). */
  usageFlushMs?: number;
  /** Failures of a background write of uses (the uses are kept and retried). */
  onError?: (error: unknown) => void;
}

/** `list`'s filters; each order is its own statement (SQLite binds no ORDER BY direction). */
const LIST = `SELECT ${COLUMNS} FROM reflections WHERE agent_id = @agentId AND (@kind IS NULL OR kind = @kind)
    AND (@superseded IS NULL OR (superseded_by IS NOT NULL) = @superseded)
    AND (@needsTags = 0 OR (superseded_by IS NULL AND tags_by IS NULL))
    AND (@visible = 0 OR ((scope IS NULL OR scope = @visibleScope) AND (user_id IS NULL OR user_id = @visibleUser)))
    AND (@byScope = 0 OR scope IS @scope)
    AND (@byUser = 0 OR user_id IS @user)`;

/** One write's effect on the snapshots: per agent, its new version and the changes. */
type WriteLog = Map<string, { version: number | undefined; changes: SnapshotChange[] }>;

export class SqliteReflectionStore implements ReflectionStore {
  readonly #db: SqliteDatabase;
  readonly #now: () => number;
  readonly #cachedAgents: number;
  readonly #cachedReflections: number;
  readonly #keywordPostingBudget: number;
  readonly #onError: (error: unknown) => void;
  readonly #versions: TenantVersions;
  readonly #usage: PendingUsage;
  /** Insertion order doubles as recency: a hit is re-inserted at the end. */
  readonly #snapshots = new Map<string, AgentSnapshot>();
  readonly #sql;
  #closed = false;

  constructor(db: SqliteDatabase, options: SqliteReflectionStoreOptions = {}) {
    this.#db = db;
    this.#now = options.now ?? Date.now;
    this.#cachedAgents = options.cachedAgents ?? 32;
    this.#cachedReflections = options.cachedReflections ?? 100_000;
    this.#keywordPostingBudget = options.keywordPostingBudget ?? 2_000;
    this.#onError = options.onError ?? ((error) => console.error('engram reflection store:', error));
    this.#versions = new TenantVersions(db);
    this.#usage = new PendingUsage(options.usageFlushMs ?? 1_000, () => this.#flushUsage());
    this.#sql = {
      upsert: db.prepare<[Record<string, unknown>], ReflectionRow>(
        `INSERT INTO reflections (agent_id, id, kind, content, topic, tags, source, created_at, updated_at,
                                  last_used_at, use_count, embedder_id, origin, superseded_by, superseded_at,
                                  tags_by, scope, user_id, vector)
         VALUES (@agentId, @id, @kind, @content, @topic, @tags, @source, @createdAt, @updatedAt,
                 @lastUsedAt, @useCount, @embedderId, @origin, @supersededBy, @supersededAt, @tagsBy,
                 @scope, @user, @vector)
         ON CONFLICT (agent_id, id) DO UPDATE SET
           kind = excluded.kind, content = excluded.content, topic = excluded.topic, tags = excluded.tags,
           source = excluded.source, updated_at = excluded.updated_at, embedder_id = excluded.embedder_id,
           origin = excluded.origin, superseded_by = excluded.superseded_by,
           superseded_at = excluded.superseded_at, tags_by = excluded.tags_by,
           scope = excluded.scope, user_id = excluded.user_id, vector = excluded.vector,
           -- Re-extracting a known reflection must not reset how it has been used.
           created_at = MIN(created_at, excluded.created_at),
           use_count = MAX(use_count, excluded.use_count),
           last_used_at = MAX(COALESCE(last_used_at, excluded.last_used_at), COALESCE(excluded.last_used_at, last_used_at))
         RETURNING ${COLUMNS}`,
      ),
      get: db.prepare<[string, string], ReflectionRow>(`SELECT ${COLUMNS} FROM reflections WHERE agent_id = ? AND id = ?`),
      // The ids as one JSON array: one statement whatever their number.
      getMany: db.prepare<[string, string], ReflectionRow>(`SELECT ${COLUMNS} FROM reflections WHERE agent_id = ? AND id IN (SELECT value FROM json_each(?))`),
      list: db.prepare<[Record<string, unknown>], ReflectionRow>(`${LIST} ORDER BY updated_at DESC, seq DESC LIMIT @limit OFFSET @offset`),
      listOldest: db.prepare<[Record<string, unknown>], ReflectionRow>(`${LIST} ORDER BY updated_at, seq LIMIT @limit OFFSET @offset`),
      count: db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM reflections WHERE agent_id = ?'),
      vector: db.prepare<[string, string], Buffer>('SELECT vector FROM reflections WHERE agent_id = ? AND id = ?').pluck(),
      update: db.prepare(
        `UPDATE reflections SET kind = @kind, content = @content, topic = @topic, tags = @tags,
           embedder_id = @embedderId, vector = COALESCE(@vector, vector), updated_at = @updatedAt,
           superseded_by = @supersededBy, superseded_at = @supersededAt, tags_by = @tagsBy, scope = @scope
         WHERE agent_id = @agentId AND id = @id`,
      ),
      delete: db
        .prepare<[string, string], number>('DELETE FROM reflections WHERE agent_id = ? AND id = ? RETURNING seq')
        .pluck(),
      deleteAgent: db.prepare('DELETE FROM reflections WHERE agent_id = ?'),
      markUsed: db.prepare<[{ agentId: string; id: string; count: number; at: number }]>(
        `UPDATE reflections SET use_count = use_count + @count, last_used_at = MAX(COALESCE(last_used_at, @at), @at)
         WHERE agent_id = @agentId AND id = @id`,
      ),
      snapshot: db
        .prepare<[string], SnapshotTuple>(`SELECT ${SNAPSHOT_COLUMNS} FROM reflections WHERE agent_id = ? AND ${CURRENT}`)
        .raw(),
    };
  }

  async upsert(reflections: StoredReflection[]): Promise<void> {
    if (reflections.length === 0) return;
    this.#write((log) => {
      for (const r of reflections) {
        const changes = this.#touch(log, r.agentId, true);
        const vector = vectorBlob(r.vector);
        const { supersededBy = null, supersededAt = null } = storedSupersession(r);
        const stored = this.#sql.upsert.get({
          ...r,
          tags: JSON.stringify(r.tags),
          lastUsedAt: r.lastUsedAt ?? null, // bound as before when an imported record lacks it
          origin: originText(r.origin),
          supersededBy,
          supersededAt,
          tagsBy: r.tagsBy ?? null,
          scope: r.scope || null,
          user: r.user || null,
          vector,
        });
        if (!stored) throw new Error(`upsert of reflection ${r.id} returned no row`);
        changes.push({ type: 'put', seq: stored.seq, reflection: toReflection(stored), vector });
      }
    });
  }

  async get(agentId: string, id: string): Promise<Reflection | undefined> {
    const row = this.#sql.get.get(agentId, id);
    return row && this.#withPendingUse(toReflection(row));
  }

  /**
   * From the agent's snapshot when this process holds it at the current version and it
   * holds every id (the usual case: a conversation's kept blocks re-read each turn, none
   * changed): one version lookup, no rows read. Else (one is superseded, deleted, or the
   * snapshot is stale or absent) from the table.
   */
  async getMany(agentId: string, ids: readonly string[]): Promise<Reflection[]> {
    if (ids.length === 0) return [];
    const snapshot = this.#snapshots.get(agentId);
    if (snapshot && snapshot.version === this.#versions.version(agentId)) {
      const held = [...new Set(ids)].map((id) => snapshot.byId(id));
      if (held.every((reflection) => reflection !== undefined)) return held as Reflection[];
    }
    return this.#sql.getMany.all(agentId, JSON.stringify(ids)).map((row) => this.#withPendingUse(toReflection(row)));
  }

  async list(agentId: string, query: ListQuery = {}): Promise<Reflection[]> {
    return (query.oldestFirst ? this.#sql.listOldest : this.#sql.list)
      .all({
        // Flags are 1 or 0 (better-sqlite3 binds no booleans); `superseded` null: either.
        agentId,
        kind: query.kind ?? null,
        superseded: query.superseded === undefined ? null : Number(query.superseded),
        needsTags: Number(query.needsTags === true),
        visible: Number(query.visible !== undefined),
        visibleScope: query.visible?.scope ?? null,
        visibleUser: query.visible?.user ?? null,
        // The exact filters: the flag, then the value (null: only rows without one).
        byScope: Number(query.scope !== undefined),
        scope: query.scope ?? null,
        byUser: Number(query.user !== undefined),
        user: query.user ?? null,
        limit: query.limit ?? -1, // SQLite: a negative LIMIT means no limit.
        offset: query.offset ?? 0,
      })
      .map((row) => this.#withPendingUse(toReflection(row)));
  }

  async count(agentId: string): Promise<number> {
    return this.#sql.count.get(agentId)?.n ?? 0;
  }

  async vectors(agentId: string, ids: string[]): Promise<Map<string, Float32Array>> {
    const out = new Map<string, Float32Array>();
    for (const id of ids) {
      const blob = this.#sql.vector.get(agentId, id);
      // Copied out of the row's buffer, which need not be 4-byte aligned.
      if (blob) out.set(id, new Float32Array(new Uint8Array(blob).buffer));
    }
    return out;
  }

  async update(agentId: string, id: string, patch: ReflectionPatch): Promise<Reflection | undefined> {
    return this.#write((log) => {
      const row = this.#sql.get.get(agentId, id);
      if (!row) return undefined;
      const current = toReflection(row);
      const next = patchedReflection(current, patch, this.#now());
      // A restored reflection re-enters the snapshot, which needs its vector (a write, not
      // the search path: the one extra read is here).
      const restored = current.supersededBy !== undefined && next.supersededBy === undefined;
      const written = patch.vector && vectorBlob(patch.vector);
      const vector = written ?? (restored ? this.#sql.vector.get(agentId, id) : undefined);
      this.#sql.update.run({
        ...next,
        tags: JSON.stringify(next.tags),
        vector: written ?? null,
        supersededBy: next.supersededBy ?? null,
        supersededAt: next.supersededAt ?? null,
        tagsBy: next.tagsBy ?? null,
        scope: next.scope ?? null,
      });
      // The snapshot gets its own copy: `next` is returned to the caller.
      const reflection = { ...next, tags: [...next.tags] };
      this.#touch(log, agentId, true).push({ type: 'put', seq: row.seq, reflection, vector });
      return next;
    });
  }

  async delete(agentId: string, id: string): Promise<boolean> {
    return this.#write((log) => {
      const seq = this.#sql.delete.get(agentId, id);
      if (seq === undefined) return false;
      this.#touch(log, agentId, false).push({ type: 'remove', seq });
      return true;
    });
  }

  async deleteAgent(agentId: string): Promise<void> {
    this.#write((log) => {
      this.#sql.deleteAgent.run(agentId);
      this.#touch(log, agentId, false);
    });
    // Nothing is left to patch: the next search builds an empty snapshot.
    this.#snapshots.delete(agentId);
  }

  /** Computed in place, in one go: an aborted `signal` stops it only before it starts. */
  async nearest(agentId: string, query: VectorQuery): Promise<Match[]> {
    query.signal?.throwIfAborted();
    const limit = Math.max(0, Math.floor(query.limit));
    if (limit === 0) return [];
    const snapshot = this.#snapshot(agentId);
    const kindCode = query.kind === undefined ? undefined : KIND_CODES[query.kind];
    return this.#visibleMatches(snapshot, query.visible, limit, (wanted) => snapshot.matrix.candidates(query.vector, wanted, kindCode), (candidate) => candidate.score);
  }

  async keywords(agentId: string, query: KeywordQuery): Promise<Match[]> {
    query.signal?.throwIfAborted();
    const limit = Math.max(0, Math.floor(query.limit));
    const requested = queryTerms(query.text);
    if (limit === 0 || requested.length === 0) return [];
    const snapshot = this.#snapshot(agentId);
    const { matrix, keywords } = snapshot;
    const terms = pruneTerms(requested, (term) => keywords.documentFrequency(term), keywords.count, this.#keywordPostingBudget);
    const kindCode = query.kind === undefined ? undefined : KIND_CODES[query.kind];
    const vector = query.vector;
    return this.#visibleMatches(snapshot, query.visible, limit, (wanted) => keywords.search(terms, wanted, kindCode), (candidate) => {
      const row = vector && matrix.rowOfSeq.get(candidate.key);
      return row === undefined || !vector ? 0 : matrix.cosineAt(row, vector);
    });
  }

  /** `reflection_tenants.version`: bumped inside every writing transaction, by any connection. */
  async version(agentId: string): Promise<number> {
    return this.#versions.version(agentId);
  }

  /**
   * Written as the header says. This store's reads and searches include the uses at once;
   * other readers of the file (another process or store) see them once written, up to
   * `usageFlushMs` late, and this store's searches show theirs once the agent's snapshot is
   * rebuilt. A crash loses at most the last `usageFlushMs` of uses: ranking counters, not data.
   */
  async markUsed(agentId: string, ids: string[], at: number): Promise<void> {
    if (ids.length === 0) return;
    const distinct = new Set(ids);
    this.#usage.add(agentId, distinct, at);
    const snapshot = this.#snapshots.get(agentId);
    if (snapshot) for (const id of distinct) snapshot.use(id, 1, at);
    if (this.#closed) this.#flushUsage();
  }

  /**
   * Writes pending uses and drops the caches; does not close the shared database handle
   * (see database.ts). Uses recorded after close are written at once.
   */
  async close(): Promise<void> {
    this.#closed = true;
    this.#flushUsage();
    this.#snapshots.clear();
  }

  /**
   * Runs a write in one IMMEDIATE transaction (no other writer can slip in between
   * reading and bumping an agent's version), then patches this process's snapshots.
   */
  #write<T>(work: (log: WriteLog) => T): T {
    // Pending uses go first, so a write never races them: an upsert that keeps the
    // larger use_count, or a deleted and re-created id, cannot count a use twice.
    this.#flushUsage();
    const log: WriteLog = new Map();
    const result = this.#db.transaction(() => work(log)).immediate();
    for (const [agentId, { version, changes }] of log) {
      const snapshot = this.#snapshots.get(agentId);
      if (snapshot && (version === undefined || !snapshot.apply(version, changes))) this.#snapshots.delete(agentId);
    }
    return result;
  }

  /** The agent's change list in this write; the first call bumps its version. */
  #touch(log: WriteLog, agentId: string, create: boolean): SnapshotChange[] {
    let entry = log.get(agentId);
    if (!entry) log.set(agentId, (entry = { version: this.#versions.bump(agentId, create), changes: [] }));
    return entry.changes;
  }

  /** Writes the uses counted so far in one transaction; on failure they are kept for the next try. */
  #flushUsage(): void {
    if (this.#usage.empty) return;
    const log = this.#usage.take();
    if (!this.#db.open) return; // the owner closed the file: nowhere left to write them
    try {
      this.#db
        .transaction(() => {
          for (const [agentId, uses] of log) {
            for (const [id, use] of uses) this.#sql.markUsed.run({ agentId, id, count: use.count, at: use.at });
          }
        })
        .immediate();
    } catch (error) {
      this.#usage.restore(log);
      this.#onError(error);
    }
  }

  /** A row read from the file, plus this store's uses not written yet. */
  #withPendingUse(reflection: Reflection): Reflection {
    const use: Use | undefined = this.#usage.get(reflection.agentId, reflection.id);
    if (use) {
      reflection.useCount += use.count;
      reflection.lastUsedAt = Math.max(reflection.lastUsedAt ?? use.at, use.at);
    }
    return reflection;
  }

  /** The agent's snapshot, rebuilt when another connection changed its reflections. */
  #snapshot(agentId: string): AgentSnapshot {
    const version = this.#versions.version(agentId);
    const cached = this.#snapshots.get(agentId);
    if (cached && cached.version === version) {
      this.#snapshots.delete(agentId);
      this.#snapshots.set(agentId, cached);
      return cached;
    }
    // Version and rows read in one transaction so they describe the same state.
    const snapshot = this.#db.transaction(
      () =>
        new AgentSnapshot(
          this.#sql.snapshot.all(agentId).map((row) => toSnapshotEntry(agentId, row)),
          this.#versions.version(agentId),
        ),
    )();
    for (const [id, use] of this.#usage.of(agentId) ?? []) snapshot.use(id, use.count, use.at);
    this.#snapshots.delete(agentId);
    this.#snapshots.set(agentId, snapshot);
    let held = 0;
    for (const cached of this.#snapshots.values()) held += cached.size;
    // Oldest first; the new snapshot is last, so it is never dropped.
    for (const [id, cached] of this.#snapshots) {
      if (id === agentId || (this.#snapshots.size <= this.#cachedAgents && held <= this.#cachedReflections)) break;
      this.#snapshots.delete(id);
      held -= cached.size;
    }
    return snapshot;
  }

  /**
   * The `limit` best candidates `search` finds among those visible. Most agents hold no
   * scoped or user reflection: then one search, no filter. Otherwise the search widens
   * (four times the candidates each round) until it has `limit` visible ones or has seen
   * everything, so hidden reflections never crowd visible ones out of the top `limit`.
   */
  #visibleMatches(
    snapshot: AgentSnapshot,
    visible: Visibility | undefined,
    limit: number,
    search: (wanted: number) => Candidate[],
    cosine: (candidate: Candidate) => number,
  ): Match[] {
    if (!visible || !snapshot.partitioned) return this.#matches(snapshot, search(limit), cosine);
    for (let wanted = limit; ; wanted *= 4) {
      const found = search(wanted);
      const kept = found.filter((candidate) => snapshot.visible(candidate.key, visible));
      if (kept.length >= limit || found.length < wanted || wanted >= snapshot.size) {
        // Unordered candidates: keep the best `limit` by score.
        const best = kept.length > limit ? kept.sort((a, b) => b.score - a.score || a.key - b.key).slice(0, limit) : kept;
        return this.#matches(snapshot, best, cosine);
      }
    }
  }

  /**
   * The candidates as matches, in order. Built on every proxied request over up to a
   * hundred candidates a list, of which fusion keeps a handful: the copy of a reflection
   * and a keyword match's cosine are worked out only when read.
   */
  #matches(snapshot: AgentSnapshot, ranked: readonly Candidate[], cosine: (candidate: Candidate) => number): Match[] {
    const out: Match[] = [];
    for (const candidate of ranked) {
      const id = snapshot.idOf(candidate.key);
      if (id !== undefined) out.push(new SnapshotMatch(snapshot, candidate, id, cosine));
    }
    return out;
  }
}

class SnapshotMatch implements Match {
  readonly id: string;
  readonly score: number;
  readonly #snapshot: AgentSnapshot;
  readonly #candidate: Candidate;
  readonly #cosineOf: (candidate: Candidate) => number;
  #reflection: Reflection | undefined;
  #cosine: number | undefined;

  constructor(snapshot: AgentSnapshot, candidate: Candidate, id: string, cosine: (candidate: Candidate) => number) {
    this.id = id;
    this.score = candidate.score;
    this.#snapshot = snapshot;
    this.#candidate = candidate;
    this.#cosineOf = cosine;
  }

  get reflection(): Reflection {
    return (this.#reflection ??= this.#snapshot.reflection(this.#candidate.key)!);
  }

  get cosine(): number {
    return (this.#cosine ??= this.#cosineOf(this.#candidate));
  }
}
