/** Content-derived reflection ids: the same memory always gets the same id. */
import { createHash } from 'node:crypto';
import type { Reflection, ReflectionKind } from '../domain/types.js';
import { normaliseText } from '../domain/text.js';

/**
 * `ref_` and 24 hex characters (96 bits) of SHA-256 over the agent, the kind and the
 * normalised content. A re-delivered extraction job, or the same fact proposed twice with
 * different spacing or capitalisation, lands on the same id, so writes are idempotent.
 * The topic is left out on purpose: one fact filed under two topics is still one fact.
 * The agent is in the hash so ids never collide across agents that share a store; so are
 * the scope and user when there are any (DESIGN section 13): the same words learnt in two
 * projects, or taught by two users, are two reflections, and one user's never stands in
 * for another's. Without either the id is what it always was.
 */
export function reflectionId(agentId: string, kind: ReflectionKind, content: string, partition: Pick<Reflection, 'scope' | 'user'> = {}): string {
  const hash = createHash('sha256').update(agentId).update('\0').update(kind).update('\0').update(normaliseText(content));
  if (partition.scope !== undefined) hash.update('\0scope\0').update(partition.scope);
  if (partition.user !== undefined) hash.update('\0user\0').update(partition.user);
  return 'ref_' + hash.digest('hex').slice(0, 24);
}

/** Reflection ids written in a text (a `recall` result lists the ids of what it found). */
export function reflectionIdsIn(text: string): string[] {
  return text.match(/\bref_[0-9a-f]{24}\b/g) ?? [];
}
