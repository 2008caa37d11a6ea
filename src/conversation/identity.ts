/**
 * Which conversation a request continues (DESIGN section 6), best signal first: the
 * explicit `x-engram-conversation` header; a client session signal (Claude Code's
 * `x-claude-code-session-id` or `metadata.user_id`, Codex's `session-id` or
 * `prompt_cache_key`) combined with the thread's opening, since one session can run
 * several threads (sub-agents); then a Responses chain (the continued response's
 * conversation); else the opening alone (system prompt and first user message).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { idDigest as digest, sessionConversationId } from '../domain/conversation-id.js';
export { partitionedConversationId } from '../domain/conversation-id.js';
import type { JsonObject, ProtocolAdapter } from '../protocols/types.js';

const SESSION_HEADERS = ['x-claude-code-session-id', 'session-id'] as const;

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first && first.trim() ? first.trim() : undefined;
}

/** `chained`: the conversation of the response this request continues, if any. */
export function conversationId(adapter: ProtocolAdapter, body: JsonObject, headers: IncomingHttpHeaders, chained?: string): string {
  const explicit = header(headers, 'x-engram-conversation');
  if (explicit) return `x:${explicit.length <= 128 ? explicit : digest(explicit)}`;
  const session = SESSION_HEADERS.map((name) => header(headers, name)).find(Boolean) ?? adapter.sessionHint(body);
  if (chained && !session) return chained;
  const opening = digest(adapter.conversationSeed(body));
  return session ? sessionConversationId(session, opening) : `h:${opening}`;
}

