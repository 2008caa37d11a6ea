/**
 * The shapes of conversation ids, shared by the proxy (which opens conversations) and
 * transcript ingestion (which asks whether the proxy saw a session).
 */
import { createHash } from 'node:crypto';

/** A short, stable digest of a text, for ids. */
export function idDigest(text: string): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 32);
}

/**
 * The start of the id of every conversation that a client session signal `session` opened
 * (`ControlStore.hasConversation`): a transcript uploaded for that session was seen by
 * the proxy already.
 */
export function sessionConversationPrefix(session: string): string {
  return `s:${idDigest(session)}:`;
}
