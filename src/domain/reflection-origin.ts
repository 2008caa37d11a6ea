/**
 * A reflection's origin as engines store it: one JSON text (a column, a property). Read
 * defensively: a value that is not a well-formed origin reads as none, never as an error
 * that would hide the reflection.
 */
import type { ReflectionOrigin } from './types.js';

const ROLES = new Set<unknown>(['user', 'assistant', 'tool']);

export function originText(origin: ReflectionOrigin | undefined): string | null {
  return origin ? JSON.stringify(origin) : null;
}

/** The `origin` key when the text holds one; an empty object otherwise (the key stays absent). */
export function originFromText(text: unknown): { origin?: ReflectionOrigin } {
  if (typeof text !== 'string' || text === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return {};
  }
  if (typeof value !== 'object' || value === null) return {};
  const { conversation, turn, role } = value as Record<string, unknown>;
  if (typeof conversation !== 'string' || conversation === '') return {};
  const cited = Number.isInteger(turn) && (turn as number) >= 0 && ROLES.has(role);
  return { origin: { conversation, ...(cited ? { turn: turn as number, role: role as ReflectionOrigin['role'] } : {}) } };
}
