/**
 * What every route that searches memory (the proxy's injection, MCP `recall`, the
 * management search) needs: the stores, the embedder, the reranker, and where a degraded
 * search is reported. A failing embedder would otherwise log once per request: it is
 * reported once a minute, with how many searches ran on keywords only meanwhile.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Deps } from '../deps.js';
import type { MemorySearchDeps } from '../memory/memory-search.js';
import { createHandEdits } from '../memory/hand-edits.js';
import { createRetrieval } from '../memory/retrieval.js';

const REPORT_EVERY_MS = 60_000;

export function memorySearchDeps(deps: Deps, log: FastifyBaseLogger): MemorySearchDeps {
  let lastReport = -Infinity;
  let since = 0;
  return {
    reflections: deps.reflections,
    embedder: deps.embedder,
    reranker: deps.reranker,
    vocabulary: deps.vocabulary,
    onDegraded(error) {
      since++;
      const now = deps.now();
      if (now - lastReport < REPORT_EVERY_MS) return;
      log.warn(
        { err: error, embedder: deps.embedder.id, degradedSearches: since },
        'the embedder failed: memory searches run on keywords only until it answers again',
      );
      lastReport = now;
      since = 0;
    },
  };
}

/**
 * What the routes that search and change reflections (the management API, the dashboard)
 * share: the search, the injection's own retrieval (a search answers each result's
 * relevance as injection judges it, `search-relevance.ts`), and the hand edits.
 */
export function reflectionRouteDeps(deps: Deps, log: FastifyBaseLogger) {
  const search = memorySearchDeps(deps, log);
  const hand = createHandEdits({
    ...deps,
    maxReflections: deps.config.limits.maxReflections,
    onIndexError: (error, agentId) => log.warn({ err: error, agentId }, 'root index rebuild failed'),
  });
  return { search, retrieval: createRetrieval(search), hand };
}
