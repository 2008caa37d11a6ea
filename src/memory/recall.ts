/**
 * Explicit recall (the MCP `recall` tool): the agent asks its memory a question. The
 * same hybrid search and relevance rule as injection, with the caller's kind filter and
 * limit, and no token budget: the model asked for these.
 */
import type { Agent, ReflectionKind, ScoredReflection, Visibility } from '../domain/types.js';
import { keywordQuery } from '../domain/text.js';
import { searchMemory, type MemorySearchDeps } from './memory-search.js';
import { isRelated } from './retrieval.js';

export interface RecallQuery {
  query: string;
  kind?: ReflectionKind;
  limit: number;
  /** The session's scope and user (DESIGN section 13): only what they may see is recalled. */
  visible: Visibility;
  /** Once aborted (the caller has gone), the search stops and the promise rejects with its reason: nothing is found, so nothing is marked used. */
  signal?: AbortSignal;
}

const MAX_QUERY_CHARS = 2000;
const ALPHA = 0.5;

export async function recall(
  deps: MemorySearchDeps,
  agent: Agent,
  { query, kind, limit, visible, signal }: RecallQuery,
): Promise<ScoredReflection[]> {
  const text = query.trim().slice(0, MAX_QUERY_CHARS);
  if (text === '') return [];
  const results = await searchMemory(deps, agent.id, { text, keywords: keywordQuery(text), limit: limit * 3, kind, alpha: ALPHA, visible, signal });
  // A search that ended as the caller left: nothing is found for a call that has gone.
  signal?.throwIfAborted();
  return results.filter((result) => isRelated(result, deps.embedder, agent.memory.minScore)).slice(0, limit);
}
