/**
 * Explicit recall (the MCP `recall` tool): the agent asks its memory a question. The
 * same hybrid search and relevance rule as injection, with the caller's kind filter and
 * limit, and no token budget: the model asked for these.
 */
import type { Agent, ReflectionKind, ScoredReflection } from '../domain/types.js';
import { keywordQuery } from '../domain/text.js';
import type { Embedder, ReflectionStore } from '../ports/index.js';
import { hybridSearch } from './hybrid-search.js';
import { isRelevant } from './retrieval.js';

export interface RecallQuery {
  query: string;
  kind?: ReflectionKind;
  limit: number;
}

const MAX_QUERY_CHARS = 2000;
const ALPHA = 0.5;

export async function recall(
  deps: { reflections: ReflectionStore; embedder: Embedder },
  agent: Agent,
  { query, kind, limit }: RecallQuery,
): Promise<ScoredReflection[]> {
  const text = query.trim().slice(0, MAX_QUERY_CHARS);
  if (text === '') return [];
  const [vector] = await deps.embedder.embed([text]);
  const results = await hybridSearch(deps.reflections, agent.id, { text: keywordQuery(text), vector, limit: limit * 3, kind, alpha: ALPHA });
  return results.filter((result) => isRelevant(result, agent.memory.minScore)).slice(0, limit);
}
