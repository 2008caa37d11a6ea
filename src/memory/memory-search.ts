/**
 * One search of an agent's memory, as injection, `recall` and the management API run it:
 * embed the query, hybrid search (vectors and keywords, fused above the store), then the
 * soft-match reranking when word vectors are loaded. A failing embedder (an embeddings
 * endpoint that is down) degrades the search to keywords only and says so; it never
 * fails the request that searched.
 */
import type { ReflectionKind, ScoredReflection } from '../domain/types.js';
import type { Embedder, ReflectionStore } from '../ports/index.js';
import { hybridSearch } from './hybrid-search.js';
import type { Reranker } from './rerank.js';

export interface MemorySearchDeps {
  reflections: ReflectionStore;
  embedder: Embedder;
  /** Absent when no word vectors are loaded: results keep the fused order. */
  reranker?: Reranker;
  /** Told why a search ran on keywords only. */
  onDegraded?: (error: unknown) => void;
}

export interface MemoryQuery {
  /** What was asked, as text: embedded, and matched word by word when reranking. */
  text: string;
  /** The keyword query (content words). */
  keywords: string;
  limit: number;
  kind?: ReflectionKind;
  /** Weight of the vector score in the fusion. */
  alpha: number;
  /**
   * Reflections the caller drops from what is found (those a conversation already
   * holds): left out before reranking, which scores each result on its own, so the
   * others come out as they would have.
   */
  exclude?: ReadonlySet<string>;
}

export async function searchMemory(deps: MemorySearchDeps, agentId: string, query: MemoryQuery): Promise<ScoredReflection[]> {
  let vector: Float32Array | undefined;
  try {
    [vector] = await deps.embedder.embed([query.text]);
  } catch (error) {
    deps.onDegraded?.(error);
  }
  const found = await hybridSearch(deps.reflections, agentId, {
    text: query.keywords,
    vector,
    limit: query.limit,
    kind: query.kind,
    alpha: query.alpha,
  });
  const exclude = query.exclude;
  const kept = exclude && exclude.size > 0 ? found.filter((result) => !exclude.has(result.reflection.id)) : found;
  // A search that found one result leaves its fused score as it is (nothing to rank it against).
  return deps.reranker && found.length >= 2 ? deps.reranker.rerank(query.text, kept) : kept;
}
