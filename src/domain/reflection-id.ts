/** Content-derived reflection ids: the same memory always gets the same id. */
import { createHash } from 'node:crypto';
import type { ReflectionKind } from './types.js';
import { normaliseText } from './text.js';

/**
 * `ref_` and 24 hex characters (96 bits) of SHA-256 over the agent, the kind and the
 * normalised content. A re-delivered extraction job, or the same fact proposed twice with
 * different spacing or capitalisation, lands on the same id, so writes are idempotent.
 * The topic is left out on purpose: one fact filed under two topics is still one fact.
 * The agent is in the hash so ids never collide across agents that share a store.
 */
export function reflectionId(agentId: string, kind: ReflectionKind, content: string): string {
  const digest = createHash('sha256')
    .update(agentId)
    .update('\0')
    .update(kind)
    .update('\0')
    .update(normaliseText(content))
    .digest('hex');
  return 'ref_' + digest.slice(0, 24);
}

/** Reflection ids written in a text (a `recall` result lists the ids of what it found). */
export function reflectionIdsIn(text: string): string[] {
  return text.match(/\bref_[0-9a-f]{24}\b/g) ?? [];
}
