/**
 * The shapes of conversation ids, shared by the proxy (which opens conversations) and
 * transcript ingestion (which asks whether the proxy saw a session).
 */
import { createHash } from 'node:crypto';

/** A short, stable digest of a text, for ids. */
export function idDigest(text: string): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 32);
}

/** The id of a conversation a client session signal `session` opened: `s:<session digest>:<opening digest>`. */
export function sessionConversationId(session: string, openingDigest: string): string {
  return `s:${idDigest(session)}:${openingDigest}`;
}

/**
 * The session digest of a conversation opened by a client session signal (recorded with
 * `ConversationStore.markSession`, so a transcript of that session uploaded later is known
 * to have been learnt from through the proxy), or undefined for other conversations.
 */
export function sessionDigestOf(conversationId: string): string | undefined {
  if (!conversationId.startsWith('s:')) return undefined;
  const end = conversationId.indexOf(':', 2);
  return end > 2 ? conversationId.slice(2, end) : undefined;
}
