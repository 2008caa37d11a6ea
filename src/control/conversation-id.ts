/**
 * The shapes of conversation ids, shared by the proxy (which opens conversations) and
 * transcript ingestion (which asks whether the proxy saw a session).
 */
import { createHash } from 'node:crypto';
import type { Turn } from '../domain/transcript.js';

/** A short, stable digest of a text, for ids. */
export function idDigest(text: string): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 32);
}

/** The id of a conversation a client session signal `session` opened: `s:<session digest>:<opening digest>`. */
export function sessionConversationId(session: string, openingDigest: string): string {
  return `s:${idDigest(session)}:${openingDigest}`;
}

/**
 * The id of a conversation its opening alone does not tell apart (`opening`: `h:<digest>`,
 * or a session's `s:<session>:<digest>`): the opening together with the first answer
 * Engram relayed in it (DESIGN section 6). Two chats that open with the same words are one
 * until the upstream answers them; from their first answer on they are two, each finding
 * its own state. The answer is read as its transcript turn with every space left out, so
 * the answer as relayed and as the client sends it back (re-serialised tool arguments,
 * trimmed text) name the same conversation.
 */
export function answeredConversationId(opening: string, answer: Turn): string {
  return `${opening}:${idDigest(compacted(answer.text, ANSWER_CHARS))}`;
}

/** Characters of an answer that name it: far more than two answers to one opening share. */
const ANSWER_CHARS = 4096;

/**
 * The first `max` characters of `text` that are not white space: read from its first
 * `4 × max` characters, so a long answer costs no more than a short one (two renderings
 * of one answer differ in their spacing far less than that).
 */
function compacted(text: string, max: number): string {
  return text.slice(0, 4 * max).replace(/\s+/g, '').slice(0, max);
}

/**
 * The session digest of a conversation opened by a client session signal (recorded with
 * `ConversationStore.markSession`, so a transcript of that session uploaded later is known
 * to have been learnt from through the proxy), or undefined for other conversations.
 */
export function sessionDigestOf(id: string): string | undefined {
  // An end user's or a named project's conversation (`partitionedConversationId`) holds the session's id after its prefixes.
  let conversationId = id;
  while (conversationId.startsWith('u:') || conversationId.startsWith('p:')) conversationId = conversationId.slice(conversationId.indexOf(':', 2) + 1);
  if (!conversationId.startsWith('s:')) return undefined;
  const end = conversationId.indexOf(':', 2);
  return end > 2 ? conversationId.slice(2, end) : undefined;
}

/**
 * The conversation's id for an app's end user (`x-engram-user`, DESIGN section 13): the
 * user's digest before the id, so two users' conversations with the same opening (the
 * same system prompt and question, the same session id) never share a state. Without a
 * user the id is unchanged.
 */
export function userConversationId(id: string, user: string | undefined): string {
  return user === undefined ? id : `u:${idDigest(user)}:${id}`;
}

/**
 * The conversation's id for an end user and for a project a request names itself
 * (`x-engram-scope`): the same opening sent for two projects is two conversations, each
 * with its own state (the blocks re-applied each turn hold what that project sees). A
 * project read from the client's prompt needs no prefix: the prompt that names it is in
 * the opening already. Without either the id is unchanged.
 */
export function partitionedConversationId(id: string, { user, scope }: { user?: string; scope?: string }): string {
  return userConversationId(scope === undefined ? id : `p:${idDigest(scope)}:${id}`, user);
}
