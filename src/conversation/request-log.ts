/**
 * A proxied turn's entry in the request log (DESIGN section 12), written after the turn
 * ended: ids, numbers and the injected reflections' signals, never the request's or the
 * answer's text. Best effort: the client already has its answer, so a write the store
 * refuses is logged and counted, and changes nothing else.
 */
import type { Judged } from '../memory/retrieval.js';
import type { Agent } from '../domain/types.js';
import type { InjectedReflection, NothingAdded, RequestEntry, RequestLog } from '../ports/index.js';
import type { Resolved } from './exchange.js';

/** What the log keeps of one injected reflection: its id, its relevance, and the signal that made it relevant. */
export function injectedReflection(judged: Judged): InjectedReflection {
  return { reflectionId: judged.reflection.id, relevance: judged.relevance, why: signalOf(judged) };
}

/** `meaning`, `tags`, or `named term "<term>"` (the term the request and the reflection both name). */
export function signalOf(judged: Pick<Judged, 'why' | 'named'>): string {
  if (judged.why === 'named' && judged.named) return `named term ${JSON.stringify(judged.named.term)}`;
  return judged.why === 'tags' ? 'tags' : 'meaning';
}

/**
 * Why memory left the turn alone on purpose, if it did: a client's chore, or the agent's
 * injection turned off (the same rules the inject and settle steps follow).
 */
export function memorySkipped(agent: Agent, resolved: Pick<Resolved, 'chore'> | undefined): Extract<NothingAdded, 'client_chore' | 'injection_off'> | null {
  if (resolved?.chore) return 'client_chore';
  return agent.memory.inject ? null : 'injection_off';
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
