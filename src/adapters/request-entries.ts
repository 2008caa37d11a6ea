/**
 * What both engines of the request log (`ports/requests.ts`) store of an entry, and which
 * entries a listing's filter keeps. The SQLite adapter states the same filter in SQL
 * (`sqlite/request-log.ts`); the contract suite holds both to it.
 */
import type { KeptReflection, NearMiss, Rebuilt, RequestEntry, RequestFilter } from '../ports/requests.js';

/**
 * The entry with the port's fields only, nested lists included: whatever else a caller's
 * objects carry (a judged reflection's text, say) never reaches the store, which must hold
 * ids and numbers, never text.
 */
export function storedEntry(entry: RequestEntry): RequestEntry {
  return {
    id: entry.id,
    agentId: entry.agentId,
    at: entry.at,
    protocol: entry.protocol,
    conversationId: entry.conversationId,
    status: entry.status,
    outcome: entry.outcome,
    latencyMs: entry.latencyMs,
    upstreamMs: entry.upstreamMs,
    injected: entry.injected.map(({ reflectionId, relevance, why }) => ({ reflectionId, relevance, why })),
    kept: keptList(entry.kept),
    rebuilt: rebuiltOf(entry.rebuilt),
    reason: entry.reason,
    bar: entry.bar,
    nearMisses: nearMissList(entry.nearMisses),
    scope: entry.scope,
    user: entry.user,
    answerLimit: entry.answerLimit ?? null,
  };
}

export function keptList(kept: readonly KeptReflection[]): KeptReflection[] {
  return kept.map(({ reflectionId, turn }) => ({ reflectionId, turn }));
}

export function rebuiltOf(rebuilt: Rebuilt | null): Rebuilt | null {
  if (rebuilt === null) return null;
  return {
    blocks: [...rebuilt.blocks],
    changes: rebuilt.changes.map(({ reflectionId, change, replacedBy }) => ({ reflectionId, change, ...(replacedBy === undefined ? {} : { replacedBy }) })),
  };
}

export function nearMissList(nearMisses: readonly NearMiss[]): NearMiss[] {
  return nearMisses.map(({ reflectionId, relevance }) => ({ reflectionId, relevance }));
}

/**
 * Whether a listing with `filter` keeps `entry`. Nothing was added to a request when its
 * `injected` list is empty: `reason` says why for entries logged since reasons were, and
 * an older entry that got nothing counts as such too, though it holds no reason.
 */
export function matchesFilter(entry: Pick<RequestEntry, 'conversationId' | 'outcome' | 'injected'>, filter: RequestFilter): boolean {
  return (
    (filter.conversationId === undefined || entry.conversationId === filter.conversationId) &&
    (filter.outcome === undefined || entry.outcome === filter.outcome) &&
    (filter.nothingAdded === undefined || (entry.injected.length === 0) === filter.nothingAdded)
  );
}
