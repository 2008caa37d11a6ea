/**
 * A person's search of an agent's memory (the management API's `?q=`, the dashboard's
 * reflection search, `engram reflections search`), each result with its relevance on the
 * one scale Engram speaks everywhere (`Judged.relevance`): the number injection compares
 * with the agent's bar (`min_score`), so a person reads a search, the request log and the
 * agent's settings in the same units. The search's own fused score ranks the results but is
 * relative to the result set (the best of a bad lot scores 1), so it is not shown.
 */
import type { Agent, ReflectionKind, ScoredReflection, Visibility } from '../domain/types.js';
import { searchMemory, type MemorySearchDeps } from './memory-search.js';
import { relevanceRule, type Retrieval, type Verdict } from './retrieval.js';

/** Weight of the vector score in the fusion, as the searches people run have always used. */
const ALPHA = 0.5;

export interface SearchedReflection extends ScoredReflection {
  /**
   * As injection judges it for a request saying the query (a named term's lift included)
   * when it is among the candidates injection weighs; otherwise its cosine on the same
   * scale, by meaning alone (what injection would give it without a named term).
   */
  relevance: number;
  /** What injection would do with it; absent when it is not among the candidates injection weighs. */
  verdict?: Verdict;
}

export interface RelevanceSearch {
  /** Best first, as the hybrid search ranks them. */
  results: SearchedReflection[];
  /** The agent's bar (`min_score`): relevance at or above it is injected unasked. */
  bar: number;
  /** What a request saying the query would get injected, best first (`Retrieval.explain`'s taken ones). */
  injected: string[];
}

export interface RelevanceSearchQuery {
  text: string;
  limit: number;
  kind?: ReflectionKind;
  /** What a conversation of this scope and user would see; absent: everything. */
  visible?: Visibility;
  /** Once aborted (the person asking has gone), both searches stop and the promise rejects. */
  signal?: AbortSignal;
}

export async function searchWithRelevance(
  deps: { search: MemorySearchDeps; retrieval: Retrieval },
  agent: Agent,
  query: RelevanceSearchQuery,
): Promise<RelevanceSearch> {
  const [found, verdicts] = await Promise.all([
    searchMemory(deps.search, agent.id, { text: query.text, keywords: query.text, limit: query.limit, kind: query.kind, alpha: ALPHA, visible: query.visible, signal: query.signal }),
    deps.retrieval.explain(agent, query.text, query.visible, query.signal),
  ]);
  const judged = new Map(verdicts.map((verdict) => [verdict.judged.reflection.id, verdict]));
  const byMeaning = meaningRelevance(deps.search.embedder, agent);
  const results = found.map((result): SearchedReflection => {
    const verdict = judged.get(result.reflection.id);
    return verdict ? { ...result, relevance: verdict.judged.relevance, verdict } : { ...result, relevance: byMeaning(result) };
  });
  return {
    results,
    bar: agent.memory.minScore,
    injected: verdicts.filter((verdict) => verdict.taken).map((verdict) => verdict.judged.reflection.id),
  };
}

/**
 * A search result's relevance by meaning alone (its cosine, without a named term's lift),
 * on the agent's scale: what `recall` shows the model beside each memory, and a person's
 * search for results injection does not weigh.
 */
export function meaningRelevance(embedder: MemorySearchDeps['embedder'], agent: Agent): (result: ScoredReflection) => number {
  const { offset } = relevanceRule(embedder, agent.memory.minScore);
  return (result) => result.vectorScore - offset;
}
