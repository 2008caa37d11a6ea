/**
 * Retrieval for injection (DESIGN section 6): which of an agent's reflections belong in
 * the request about to be forwarded. Runs on the proxy's hot path: one embedding, one
 * hybrid search.
 */
import type { Agent, Reflection, ScoredReflection } from '../domain/types.js';
import { headAndTail, keywordQuery, withoutNoiseLines } from '../domain/text.js';
import { searchMemory, type MemoryQuery, type MemorySearchDeps } from './memory-search.js';
import type { Embedder, RelevanceCalibration } from '../ports/index.js';
import { REFLECTIONS_CLOSE, REFLECTIONS_OPEN, REFLECTIONS_PREAMBLE, reflectionLine, stripEngramBlocks } from './engram-blocks.js';

export { renderReflectionsBlock, stripEngramBlocks } from './engram-blocks.js';

/**
 * A long message is searched for by its first 300 and its last 700 characters, once lines
 * of pasted noise (stack frames, hex) are dropped: the request is usually at one end,
 * around a pasted log, diff or stack trace, which must not drown it (and the embedding
 * costs time in proportion to the text, on every new user turn).
 */
const QUERY_HEAD_CHARS = 300;
const QUERY_TAIL_CHARS = 700;
/** Keyword terms from the opening words of the head, ahead of the tail's latest: the store keeps the first 32. */
const QUERY_HEAD_KEYWORDS = 12;
const MAX_KEYWORDS = 32;
/** Candidates fetched per injected slot: room for the filters below to drop some. */
const CANDIDATE_FACTOR = 3;
const MIN_CANDIDATES = 10;
/** Weight of the vector score in the fusion (0.5: vector and keyword count alike). */
const ALPHA = 0.5;
/** A keyword-backed result must rank in the upper half of the results. */
const KEYWORD_MIN_FUSED = 0.5;

export interface Retrieval {
  /**
   * Reflections to inject for `query` (the latest user input), best first: at most
   * `agent.memory.topK`, fitting `agent.memory.tokenBudget` once rendered, none whose id
   * is in `exclude` (already injected in this conversation). An empty query gives [].
   * Recording the use (`ReflectionStore.markUsed`) is the caller's job, once it has
   * actually injected them.
   */
  retrieve(agent: Agent, query: string, exclude: ReadonlySet<string>): Promise<Reflection[]>;
}

export type RetrievalDeps = MemorySearchDeps;

export function createRetrieval(deps: RetrievalDeps): Retrieval {
  return {
    async retrieve(agent, query, exclude) {
      const search = injectionQuery(query);
      const { topK, tokenBudget, minScore } = agent.memory;
      if (!search || topK <= 0 || tokenBudget <= 0) return [];
      const results = await searchMemory(deps, agent.id, { ...search, limit: injectionSearchLimit(topK) + exclude.size, exclude });
      const rule = relevanceRule(deps.embedder, minScore);
      const relevant = results.filter((r) => !exclude.has(r.reflection.id) && isRelevant(r, rule));
      return fitBudget(rank(relevant).slice(0, topK), tokenBudget);
    },
  };
}

/**
 * The search injection runs for a user message, without its limit: Engram's own blocks
 * and pasted noise lines dropped, the head and the tail of a long message (see above).
 * Undefined when nothing is left to search for.
 */
export function injectionQuery(message: string): Omit<MemoryQuery, 'limit'> | undefined {
  const { head, tail } = headAndTail(withoutNoiseLines(stripEngramBlocks(message)), QUERY_HEAD_CHARS, QUERY_TAIL_CHARS);
  const text = `${head}\n${tail}`.trim();
  if (text === '') return undefined;
  // A query that fits whole is all `tail`: its opening words still come first (a turn's query opens with what the user asked).
  const keywords = new Set([...terms(keywordQuery(head || tail, QUERY_HEAD_KEYWORDS, 'earliest')), ...terms(keywordQuery(tail))]);
  return { text, keywords: [...keywords].slice(0, MAX_KEYWORDS).join(' '), alpha: ALPHA };
}

/** Candidates fetched for `topK` injected reflections: room for the relevance rule to drop some. */
export function injectionSearchLimit(topK: number): number {
  return Math.max(topK * CANDIDATE_FACTOR, MIN_CANDIDATES);
}

const terms = (query: string): string[] => (query === '' ? [] : query.split(' '));

/**
 * The rule that keeps unrelated memories out of a request. Fused and keyword scores are
 * relative to the result set (the best of a bad lot still scores 1), so the absolute
 * signal is the cosine, on the embedder's own scale (`Embedder.relevance`, calibrated on
 * the injection evaluation; the agent's `minScore` can only make it stricter):
 *   - cosine >= minCosine: related by meaning; or
 *   - a keyword hit that ranks in the upper half of the results AND has a cosine of at
 *     least `keywordFraction` of minCosine: an exact term (an identifier, a file name) the
 *     embedding underrates, but never a text that only shares a word and nothing else.
 */
export function isRelevant(result: Pick<ScoredReflection, 'score' | 'vectorScore' | 'keywordScore'>, rule: RelevanceCalibration): boolean {
  if (result.vectorScore >= rule.minCosine) return true;
  return result.keywordScore > 0 && result.score >= KEYWORD_MIN_FUSED && result.vectorScore >= rule.minCosine * rule.keywordFraction;
}

/**
 * The looser rule of an explicit search (`recall`, where the model asked): any keyword
 * match, exact or by meaning (the reranker's word matching), or a cosine within reach of
 * the injection rule's. The caller ranks them.
 */
export function isRelated(result: ScoredReflection, rule: RelevanceCalibration): boolean {
  return result.keywordScore > 0 || (result.matchScore ?? 0) > 0 || result.vectorScore >= rule.minCosine * rule.keywordFraction;
}

/** The rule for an agent: the embedder's calibration, made stricter by the agent's `minScore`. */
export function relevanceRule(embedder: Pick<Embedder, 'relevance'>, minScore: number): RelevanceCalibration {
  const calibrated = embedder.relevance ?? UNCALIBRATED;
  return { minCosine: Math.max(minScore, calibrated.minCosine), keywordFraction: calibrated.keywordFraction };
}

/** An embedder without a calibration (an endpoint's model): the agent's `minScore` decides. */
const UNCALIBRATED: RelevanceCalibration = { minCosine: 0, keywordFraction: 0.75 };

/** Best fused score first; among equal scores procedural first (it prevents mistakes), then id. */
function rank(results: ScoredReflection[]): ScoredReflection[] {
  const procedural = (r: ScoredReflection) => (r.reflection.kind === 'procedural' ? 0 : 1);
  return [...results].sort(
    (a, b) =>
      b.score - a.score ||
      procedural(a) - procedural(b) ||
      b.vectorScore - a.vectorScore ||
      (a.reflection.id < b.reflection.id ? -1 : a.reflection.id > b.reflection.id ? 1 : 0),
  );
}

/**
 * Keeps results, in order, while the rendered block stays within `budget` estimated
 * tokens (chars / 4); one that does not fit is skipped and a shorter later one may still.
 */
function fitBudget(results: ScoredReflection[], budget: number): Reflection[] {
  const maxChars = budget * 4;
  // Frame: open tag, preamble, close tag, and the newlines between them.
  let used = REFLECTIONS_OPEN.length + REFLECTIONS_PREAMBLE.length + REFLECTIONS_CLOSE.length + 2;
  const out: Reflection[] = [];
  for (const { reflection } of results) {
    const cost = reflectionLine(reflection).length + 1;
    if (used + cost > maxChars) continue;
    used += cost;
    out.push(reflection);
  }
  return out;
}
