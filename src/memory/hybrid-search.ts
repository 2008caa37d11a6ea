/**
 * Hybrid search over the reflection store port: the vector search and the keyword search
 * run side by side, and their results are fused here, the same way for every engine.
 *
 * Relative score fusion, as Weaviate's `relativeScoreFusion`: each list's scores are
 * min-max normalised to [0, 1] (all equal: 1), then combined as
 * `alpha * vector + (1 - alpha) * keyword`; a reflection absent from a list gets 0 there.
 */
import type { ReflectionKind, ScoredReflection, Visibility } from '../domain/types.js';
import type { Match, ReflectionStore } from '../ports/reflections.js';

export interface HybridQuery {
  /** Keyword query (free text; the store tokenises it). May be empty: vector only. */
  text: string;
  /**
   * Query vector from the same embedder as the stored vectors. Absent when the embedder
   * failed: the search is then keyword only (degraded, not failed).
   */
  vector: Float32Array | undefined;
  limit: number;
  kind?: ReflectionKind;
  /** Weight of the vector score in the fusion, 0..1 (Weaviate's `alpha`); default 0.5. */
  alpha?: number;
  /**
   * Results taken from each search before fusion (at least `limit`). Like Weaviate's
   * hybrid sub-search limit, it sets the population the normalisation is relative to.
   */
  candidates?: number;
  /** Only what a conversation of this scope and user may see; absent: everything (the management API). */
  visible?: Visibility;
  /** As `VectorQuery.signal`: passed to both searches. */
  signal?: AbortSignal;
}

export const FUSION_CANDIDATES = 100;

/** Best first; results carry the fused score, the cosine and the normalised keyword score. */
export async function hybridSearch(store: ReflectionStore, agentId: string, query: HybridQuery): Promise<ScoredReflection[]> {
  const limit = Math.max(0, Math.floor(query.limit));
  if (limit === 0) return [];
  const candidates = Math.max(limit, query.candidates ?? FUSION_CANDIDATES);
  const [byVector, byKeyword] = await Promise.all([
    query.vector ? store.nearest(agentId, { vector: query.vector, limit: candidates, kind: query.kind, visible: query.visible, signal: query.signal }) : [],
    store.keywords(agentId, { text: query.text, limit: candidates, kind: query.kind, vector: query.vector, visible: query.visible, signal: query.signal }),
  ]);
  return relativeScoreFusion(byVector, byKeyword, query.alpha ?? 0.5, limit);
}

interface Fused {
  match: Match;
  vector: number;
  keyword: number;
  score: number;
}

/**
 * The best `limit` (default: all) of both lists fused, best first; ties go to the higher
 * cosine, then the older reflection, then the smaller id.
 */
export function relativeScoreFusion(
  byVector: readonly Match[],
  byKeyword: readonly Match[],
  alpha: number,
  limit = Infinity,
): ScoredReflection[] {
  if (limit <= 0) return [];
  const weight = Math.min(1, Math.max(0, Number.isFinite(alpha) ? alpha : 0.5));
  const fused = new Map<string, Fused>();
  const normalise = normaliser(byVector);
  for (const match of byVector) fused.set(match.id, { match, vector: normalise(match.score), keyword: 0, score: 0 });
  const normaliseKeyword = normaliser(byKeyword);
  for (const match of byKeyword) {
    const entry = fused.get(match.id);
    if (entry) entry.keyword = normaliseKeyword(match.score);
    else fused.set(match.id, { match, vector: 0, keyword: normaliseKeyword(match.score), score: 0 });
  }
  for (const entry of fused.values()) entry.score = weight * entry.vector + (1 - weight) * entry.keyword;
  return best(fused.values(), Math.min(limit, fused.size)).map(({ match, score, keyword }) => ({
    reflection: match.reflection,
    score,
    vectorScore: match.cosine,
    keywordScore: keyword,
  }));
}

/**
 * The `count` best entries, best first. This runs on every proxied request over up to
 * two hundred candidates to keep a handful: an insertion into a short ranked list, not a
 * sort of them all.
 */
function best(entries: Iterable<Fused>, count: number): Fused[] {
  const ranked: Fused[] = [];
  if (count <= 0) return ranked;
  for (const entry of entries) {
    if (ranked.length === count && compare(entry, ranked[count - 1]) >= 0) continue;
    let at = ranked.length < count ? ranked.length : count - 1;
    ranked[at] = entry;
    while (at > 0 && compare(ranked[at], ranked[at - 1]) < 0) {
      [ranked[at], ranked[at - 1]] = [ranked[at - 1], ranked[at]];
      at--;
    }
  }
  return ranked;
}

/** Min-max normalisation over the list's scores (all equal: 1). */
function normaliser(list: readonly Match[]): (score: number) => number {
  const scores = list.map(({ score }) => score);
  const min = Math.min(...scores);
  const range = Math.max(...scores) - min;
  return (score) => (range > 0 ? (score - min) / range : 1);
}

/** Fused score, then cosine, then age, then id; the cosine and age are read only on a tie. */
function compare(a: Fused, b: Fused): number {
  return (
    b.score - a.score ||
    b.match.cosine - a.match.cosine ||
    a.match.reflection.createdAt - b.match.reflection.createdAt ||
    (a.match.id < b.match.id ? -1 : a.match.id > b.match.id ? 1 : 0)
  );
}
