/**
 * Reflections with their vectors, one tenant per agent (DESIGN section 2): the embedded
 * SQLite file or a Weaviate collection with multi-tenancy. The port offers the two
 * searches both engines compute exactly, a vector search by cosine and a keyword search
 * by BM25; their fusion and the relevance rule live above it (`memory/hybrid-search.ts`),
 * so both engines rank the same way. Every adapter passes
 * `test/contracts/reflection-store.contract.ts`. Searches never cross agents.
 *
 * A superseded reflection (`supersededBy` set: a changed fact replaced it, DESIGN section
 * 5) is history: `get`, `list` and `count` see it, with its fields; searches never return
 * superseded reflections. Patching `supersededBy: null` restores it, searchable at once.
 */
import type { Reflection, ReflectionKind, TagAuthor, Visibility } from '../domain/types.js';

export interface StoredReflection extends Reflection {
  vector: Float32Array;
}

/** Filters combine (all must hold); the order is most recently updated first unless `oldestFirst`. */
export interface ListQuery {
  limit?: number;
  offset?: number;
  kind?: ReflectionKind;
  /** true: only superseded reflections; false: only current ones; absent: both. */
  superseded?: boolean;
  /**
   * true: only current reflections no one has tagged yet (`tagsBy` absent), the tagging
   * job's work list; false or absent: no such filter.
   */
  needsTags?: boolean;
  /**
   * true: least recently updated first (the tagging job works through a backlog from its
   * oldest end, so newer untagged reflections cannot starve older ones); ties in any order.
   */
  oldestFirst?: boolean;
  /** Only what a conversation of this scope and user may see (`isVisible`); absent: everything. */
  visible?: Visibility;
  /** Only reflections of exactly this scope; null: only those without one (the management API's filter). */
  scope?: string | null;
  /** Only reflections of exactly this user; null: only the agent's own. */
  user?: string | null;
}

export type ReflectionPatch = Partial<Pick<Reflection, 'kind' | 'content' | 'topic' | 'tags'>> & {
  /** Moves it to this scope; null: it holds everywhere. Absent: unchanged. */
  scope?: string | null;
  vector?: Float32Array;
  embedderId?: string;
  /**
   * An id marks the reflection superseded by that reflection, stamping `supersededAt`
   * (the patch's, else now; superseding it again re-stamps it); null restores it, clearing
   * both. Absent: unchanged.
   */
  supersededBy?: string | null;
  /** When it was superseded; read only beside a `supersededBy` id. */
  supersededAt?: number;
  /** Who wrote the tags; null clears it (no one has tagged it). Absent: unchanged. */
  tagsBy?: TagAuthor | null;
};

export interface VectorQuery {
  /** Unit-length, from the same embedder as the stored vectors. */
  vector: Float32Array;
  limit: number;
  kind?: ReflectionKind;
  /**
   * Only reflections a conversation of this scope and user may see (`isVisible`): the
   * `limit` best among those, never fewer because others were hidden. Absent: all (the
   * management API's search). Every conversation passes one.
   */
  visible?: Visibility;
  /** Once aborted (the request that asked has gone), the search rejects with its reason; one already under way may finish first. */
  signal?: AbortSignal;
}

export interface KeywordQuery {
  /** Free text; the adapter tokenises it. Operators and quotes have no meaning. */
  text: string;
  limit: number;
  kind?: ReflectionKind;
  /** When given, each match carries its cosine similarity to this vector. */
  vector?: Float32Array;
  /** As `VectorQuery.visible`. */
  visible?: Visibility;
  /** As `VectorQuery.signal`. */
  signal?: AbortSignal;
}

export interface Match {
  /** The reflection's id (`reflection.id`), readable without materialising the reflection. */
  readonly id: string;
  readonly reflection: Reflection;
  /** The search's own score: cosine similarity (vector search) or BM25 (keyword search). */
  readonly score: number;
  /** Cosine similarity to the query vector (0 for a keyword search without one). */
  readonly cosine: number;
}

export interface ReflectionStore {
  /**
   * Idempotent on (agent, id). Re-upserting a stored id replaces kind, content, topic,
   * tags, tagsBy, supersededBy, supersededAt, source, origin, updatedAt, embedderId and
   * vector, and keeps the earliest createdAt, the larger useCount and the later
   * lastUsedAt: re-learning a reflection never resets how it has been used. The writer
   * passes the whole record it wants: a record without `supersededBy` makes a superseded
   * reflection current again, one without `tagsBy` leaves it untagged (read the stored
   * reflection first to keep them, as re-embedding and imports do). A `supersededBy`
   * without `supersededAt` is stamped with the record's `updatedAt`; a `supersededAt`
   * without `supersededBy` is dropped.
   */
  upsert(reflections: StoredReflection[]): Promise<void>;
  get(agentId: string, id: string): Promise<Reflection | undefined>;
  /**
   * These reflections as stored now (superseded ones too), in no particular order; ids
   * not stored are left out. One read however many: what a conversation checks of the
   * blocks it re-applies on every turn (`conversation/kept-blocks.ts`).
   */
  getMany(agentId: string, ids: readonly string[]): Promise<Reflection[]>;
  /** Most recently updated first; superseded reflections too unless the query says otherwise. */
  list(agentId: string, query?: ListQuery): Promise<Reflection[]>;
  /** Every reflection of the agent, superseded ones included. */
  count(agentId: string): Promise<number>;
  /** The stored vectors of these reflections (missing ids are left out): for an export. */
  vectors(agentId: string, ids: string[]): Promise<Map<string, Float32Array>>;
  /** Applies the patch and stamps `updatedAt` (an empty patch only refreshes it). */
  update(agentId: string, id: string, patch: ReflectionPatch): Promise<Reflection | undefined>;
  delete(agentId: string, id: string): Promise<boolean>;
  deleteAgent(agentId: string): Promise<void>;
  /**
   * The `limit` nearest current neighbours by cosine similarity (`score` = `cosine`), in
   * any order: rank by `score` (fusion does; sorting here would be work thrown away on
   * every request). Never a superseded reflection.
   */
  nearest(agentId: string, query: VectorQuery): Promise<Match[]>;
  /**
   * The `limit` current reflections most relevant by BM25 (`score`) among those whose
   * content, topic or tags contain a term of the query, in any order. No terms: no
   * matches. Never a superseded reflection.
   */
  keywords(agentId: string, query: KeywordQuery): Promise<Match[]>;
  /**
   * Counts a use of each reflection. Adapters may batch these writes: reads through the
   * same store see the use at once, other readers within about a second, and a crash
   * may lose about the last second of uses.
   */
  markUsed(agentId: string, ids: string[], at: number): Promise<void>;
  /**
   * A number that changes with every write to the agent's reflections (an upsert, an
   * update, a delete; not a use), whichever process sharing the store made it: a search
   * repeated at the same version finds what it found before (retrieval reuses it). Absent
   * on an engine that cannot tell: every search runs.
   */
  version?(agentId: string): Promise<number>;
  close(): Promise<void>;
}

/**
 * What `update` makes of `current`: the one reading of a `ReflectionPatch` every adapter
 * applies (the vector aside, which engines store their own way), with `updatedAt`
 * stamped `now` (never moved back).
 */
export function patchedReflection(current: Reflection, patch: ReflectionPatch, now: number): Reflection {
  const next: Reflection = {
    ...current,
    kind: patch.kind ?? current.kind,
    content: patch.content ?? current.content,
    topic: patch.topic ?? current.topic,
    tags: patch.tags ? [...patch.tags] : [...current.tags],
    embedderId: patch.embedderId ?? current.embedderId,
    updatedAt: Math.max(now, current.updatedAt),
  };
  if (patch.supersededBy === null) {
    delete next.supersededBy;
    delete next.supersededAt;
  } else if (patch.supersededBy !== undefined) {
    // Engines store "current" as no id (Weaviate as an empty text): an empty id would read back as current.
    if (patch.supersededBy === '') throw new TypeError('supersededBy must be a reflection id, or null to restore');
    next.supersededBy = patch.supersededBy;
    next.supersededAt = patch.supersededAt ?? now;
  }
  if (patch.scope === null || patch.scope === '') delete next.scope;
  else if (patch.scope !== undefined) next.scope = patch.scope;
  if (patch.tagsBy === null) delete next.tagsBy;
  else if (patch.tagsBy !== undefined) next.tagsBy = patch.tagsBy;
  return next;
}

/**
 * The supersession an upsert stores of a record: `supersededAt` only beside a
 * `supersededBy` (stamped with the record's `updatedAt` when missing), neither otherwise;
 * an empty id is no id, as engines that store "current" as empty text read it.
 */
export function storedSupersession(
  r: Pick<Reflection, 'supersededBy' | 'supersededAt' | 'updatedAt'>,
): Pick<Reflection, 'supersededBy' | 'supersededAt'> {
  return r.supersededBy ? { supersededBy: r.supersededBy, supersededAt: r.supersededAt ?? r.updatedAt } : {};
}
