/**
 * Reflections with their vectors, one tenant per agent (DESIGN section 2): the embedded
 * SQLite file or a Weaviate collection with multi-tenancy. The port offers the two
 * searches both engines compute exactly, a vector search by cosine and a keyword search
 * by BM25; their fusion and the relevance rule live above it (`memory/hybrid-search.ts`),
 * so both engines rank the same way. Every adapter passes
 * `test/contracts/reflection-store.contract.ts`. Searches never cross agents.
 */
import type { Reflection, ReflectionKind } from '../domain/types.js';

export interface StoredReflection extends Reflection {
  vector: Float32Array;
}

export interface ListQuery {
  limit?: number;
  offset?: number;
  kind?: ReflectionKind;
}

export type ReflectionPatch = Partial<Pick<Reflection, 'kind' | 'content' | 'topic' | 'tags'>> & {
  vector?: Float32Array;
  embedderId?: string;
};

export interface VectorQuery {
  /** Unit-length, from the same embedder as the stored vectors. */
  vector: Float32Array;
  limit: number;
  kind?: ReflectionKind;
}

export interface KeywordQuery {
  /** Free text; the adapter tokenises it. Operators and quotes have no meaning. */
  text: string;
  limit: number;
  kind?: ReflectionKind;
  /** When given, each match carries its cosine similarity to this vector. */
  vector?: Float32Array;
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
   * tags, source, updatedAt, embedderId and vector, and keeps the earliest createdAt, the
   * larger useCount and the later lastUsedAt: re-learning a reflection never resets how
   * it has been used.
   */
  upsert(reflections: StoredReflection[]): Promise<void>;
  get(agentId: string, id: string): Promise<Reflection | undefined>;
  /** Most recently updated first. */
  list(agentId: string, query?: ListQuery): Promise<Reflection[]>;
  count(agentId: string): Promise<number>;
  /** The stored vectors of these reflections (missing ids are left out): for an export. */
  vectors(agentId: string, ids: string[]): Promise<Map<string, Float32Array>>;
  /** Applies the patch and stamps `updatedAt` (an empty patch only refreshes it). */
  update(agentId: string, id: string, patch: ReflectionPatch): Promise<Reflection | undefined>;
  delete(agentId: string, id: string): Promise<boolean>;
  deleteAgent(agentId: string): Promise<void>;
  /**
   * The `limit` nearest neighbours by cosine similarity (`score` = `cosine`), in any order:
   * rank by `score` (fusion does; sorting here would be work thrown away on every request).
   */
  nearest(agentId: string, query: VectorQuery): Promise<Match[]>;
  /**
   * The `limit` reflections most relevant by BM25 (`score`) among those whose content,
   * topic or tags contain a term of the query, in any order. No terms: no matches.
   */
  keywords(agentId: string, query: KeywordQuery): Promise<Match[]>;
  /**
   * Counts a use of each reflection. Adapters may batch these writes: reads through the
   * same store see the use at once, other readers within about a second, and a crash
   * may lose about the last second of uses.
   */
  markUsed(agentId: string, ids: string[], at: number): Promise<void>;
  close(): Promise<void>;
}
