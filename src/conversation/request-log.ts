/**
 * A proxied turn's entry in the request log (DESIGN section 12), written after the turn
 * ended: ids, numbers and the injected reflections' signals, never the request's or the
 * answer's text. Best effort: the client already has its answer, so a write the store
 * refuses is logged and counted, and changes nothing else.
 */
import type { Judged } from '../memory/retrieval.js';
import type { InjectedReflection, NearMiss, RequestEntry, RequestLog } from '../ports/index.js';

/** What the log keeps of one injected reflection: its id, its relevance, and the signal that made it relevant. */
export function injectedReflection(judged: Judged): InjectedReflection {
  return { reflectionId: judged.reflection.id, relevance: judged.relevance, why: signalOf(judged) };
}

/** A candidate that came close: its id and relevance. */
export function nearMiss(judged: Judged): NearMiss {
  return { reflectionId: judged.reflection.id, relevance: judged.relevance };
}

/** `meaning`, `tags`, or `named term "<term>"` (the term the request and the reflection both name). */
export function signalOf(judged: Pick<Judged, 'why' | 'named'>): string {
  if (judged.why === 'named' && judged.named) return `named term ${JSON.stringify(judged.named.term)}`;
  return judged.why === 'tags' ? 'tags' : 'meaning';
}

export interface RequestLogHooks {
  log: { warn(fields: object, message: string): void };
  /** Counts a write the store refused (`engram_request_log_failures_total`). */
  failed?: () => void;
}

/** Appends `entry` without making anyone wait for it; a refusal is logged (no text in it) and counted. */
export function recordRequest(store: RequestLog, entry: RequestEntry, hooks: RequestLogHooks): void {
  store.append(entry).catch((error: unknown) => {
    hooks.failed?.();
    hooks.log.warn(
      { err: error, agentId: entry.agentId, requestId: entry.id },
      'writing the request log entry failed; the request was answered, its entry is not kept',
    );
  });
}
