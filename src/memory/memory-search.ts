/**
 * One search of an agent's memory, as injection, `recall` and the management API run it:
 * embed the query, hybrid search (vectors and keywords, fused above the store), then the
 * soft-match reranking when word vectors are loaded. A failing embedder (an embeddings
 * endpoint that is down) degrades the search to keywords only and says so; it never
 * fails the request that searched.
 */
import type { ReflectionKind, ScoredReflection, Visibility } from '../domain/types.js';
import type { Embedder, Match, ReflectionStore } from '../ports/index.js';
import { hybridSearch } from './hybrid-search.js';
import type { Reranker } from './rerank.js';
import type { Vocabulary } from './named-terms.js';

export interface MemorySearchDeps {
  reflections: ReflectionStore;
  embedder: Embedder;
  /** Absent when no word vectors are loaded: results keep the fused order. */
  reranker?: Reranker;
  /** Told why a search ran on keywords only. */
  onDegraded?: (error: unknown) => void;
  /**
   * What English knows of words (the word vectors, when loaded): how injection tells a
   * name from an everyday word (`named-terms.ts`). Absent: only shape and capitals can.
   */
  vocabulary?: Vocabulary;
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
  /**
   * Also consider the reflections holding these terms (a keyword query, searched on its
   * own), beyond the `limit` best of the main search: a reflection naming a term a long
   * request mentions once is then judged even when the rest of the request outweighs it.
   * They follow the main results, with a fused score of 0 and their own cosine.
   */
  also?: { keywords: string; limit: number };
  /**
   * Only what a conversation of this scope and user may see (DESIGN section 13): every
   * conversation, `recall` and hook passes one; absent only for the management API.
   */
  visible?: Visibility;
  /** Rerank by soft word matching (default: when a reranker is given); off when the order is not used. */
  rerank?: boolean;
  /** Once aborted (the request that searched has gone), the search stops and rejects with its reason: not degraded. */
  signal?: AbortSignal;
}

export async function searchMemory(deps: MemorySearchDeps, agentId: string, query: MemoryQuery): Promise<ScoredReflection[]> {
  const { signal } = query;
  let vector: Float32Array | undefined;
  try {
    [vector] = await deps.embedder.embed([query.text], signal);
  } catch (error) {
    signal?.throwIfAborted();
    deps.onDegraded?.(error);
  }
  const [fused, named] = await Promise.all([
    hybridSearch(deps.reflections, agentId, { text: query.keywords, vector, limit: query.limit, kind: query.kind, alpha: query.alpha, visible: query.visible, signal }),
    query.also && query.also.keywords !== ''
      ? deps.reflections.keywords(agentId, { text: query.also.keywords, limit: query.also.limit, kind: query.kind, vector, visible: query.visible, signal })
      : [],
  ]);
  const found = named.length === 0 ? fused : withAlso(fused, named);
  const exclude = query.exclude;
  const kept = exclude && exclude.size > 0 ? found.filter((result) => !exclude.has(result.reflection.id)) : found;
  // A search that found one result leaves its fused score as it is (nothing to rank it against).
  return deps.reranker && query.rerank !== false && found.length >= 2 ? deps.reranker.rerank(query.text, kept) : kept;
}

/** `fused`, then the matches of the extra keyword query it does not hold already. */
function withAlso(fused: ScoredReflection[], also: readonly Match[]): ScoredReflection[] {
  const held = new Set(fused.map((result) => result.reflection.id));
  const out = fused.slice();
  for (const match of also) {
    if (held.has(match.id)) continue;
    held.add(match.id);
    out.push({ reflection: match.reflection, score: 0, vectorScore: match.cosine, keywordScore: 0 });
  }
  return out;
}
