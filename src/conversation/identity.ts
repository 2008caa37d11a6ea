/**
 * Which conversation a request continues (DESIGN section 6), best signal first: the
 * explicit `x-engram-conversation` header; a Responses chain (the continued response's
 * conversation) when the client sends no session signal; else the conversation's opening
 * (system prompt and first user message), with the client's session signal (a header or
 * a body field its `ClientProfile.session` names) when it sends one, since one session
 * can run several threads.
 *
 * Two chats may open with the same words (a support bot's fixed first question), so a
 * conversation named by its opening is named by its opening and the first answer Engram
 * relayed in it (`answeredConversationId`); a later request is found by the answers it holds.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { answeredConversationId, idDigest as digest, sessionConversationId } from '../control/conversation-id.js';
export { answeredConversationId, partitionedConversationId } from '../control/conversation-id.js';
import type { Turn } from '../domain/transcript.js';
import type { ConversationState } from '../domain/conversation-state.js';
import type { ConversationStore, Revisioned } from '../ports/index.js';
import type { ConversationReader, JsonObject, MessageKinds, ProtocolAdapter, RequestCodec } from '../protocols/types.js';
import { CLIENTS } from '../clients/index.js';
import type { ClientProfile } from '../clients/types.js';

/**
 * Earlier answers tried, oldest first, to find a conversation named by its opening: the
 * first is the one Engram relayed, unless the client opened with answers of its own
 * (few-shot examples) or Engram joined the conversation late. Past these the request
 * opens a conversation anew (named by the answer it gets), as for one Engram never saw.
 */
export const MAX_ANSWERS_TRIED = 8;

/**
 * How a request names its conversation: by an `id` it carries (the header; `chained`: the
 * continued response's conversation, whose id is whole already, its end user and project
 * in it), or by its `opening` and the earlier `answers` it holds (oldest first, at most
 * `MAX_ANSWERS_TRIED`, read only as far as they are asked for): none when it opens the
 * conversation.
 */
export type ConversationName = { id: string; chained: boolean } | { opening: string; answers(): Iterable<Turn> };

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first && first.trim() ? first.trim() : undefined;
}

/**
 * The session the request names: a session header of any client first (in `clients`'
 * order), then a body signal of a client speaking this protocol.
 */
function clientSession(adapter: Pick<ProtocolAdapter, 'id'> & ConversationReader, body: JsonObject, headers: IncomingHttpHeaders, clients: readonly ClientProfile[] = CLIENTS): string | undefined {
  for (const { session } of clients) {
    for (const name of session?.headers ?? []) {
      const value = header(headers, name);
      if (value) return value;
    }
  }
  for (const { session } of clients) {
    if (!session?.body?.protocols.includes(adapter.id)) continue;
    const value = session.body.read(body, adapter);
    if (value) return value;
  }
  return undefined;
}

/** `chained`: the conversation of the response this request continues, if any. */
export function conversationName(
  adapter: Pick<ProtocolAdapter, 'id'> & ConversationReader & RequestCodec & MessageKinds,
  body: JsonObject,
  headers: IncomingHttpHeaders,
  chained?: string,
  clients: readonly ClientProfile[] = CLIENTS,
): ConversationName {
  const explicit = header(headers, 'x-engram-conversation');
  // Only its digest is kept and logged: a client may use a secret as its id.
  if (explicit) return { id: `x:${digest(explicit)}`, chained: false };
  const session = clientSession(adapter, body, headers, clients);
  if (chained && !session) return { id: chained, chained: true };
  const seed = digest(adapter.conversationSeed(body));
  return { opening: session ? sessionConversationId(session, seed) : `h:${seed}`, answers: () => earlierAnswers(adapter, body) };
}

/**
 * The assistant turns of the request's messages, oldest first, at most `MAX_ANSWERS_TRIED`:
 * read message by message as they are asked for, so a continuation found by its first
 * answer reads one message.
 */
function* earlierAnswers(adapter: ConversationReader & RequestCodec & MessageKinds, body: JsonObject): Generator<Turn> {
  let given = 0;
  for (const message of adapter.messages(body)) {
    if (adapter.isUserInput(message) || adapter.isToolResult(message) || adapter.isSystemEntry(message)) continue;
    for (const turn of adapter.transcript(adapter.withMessages(body, [message]))) {
      if (turn.role !== 'assistant') continue;
      yield turn;
      if (++given >= MAX_ANSWERS_TRIED) return;
    }
  }
}

/**
 * The conversation a turn belongs to once its answer is known: the one it was found in,
 * or, for a turn that opened one, its opening named by the answer's first assistant turn
 * (`answeredConversationId`). Undefined when there is nothing to name it by (an answer
 * too large to assemble, or one without an assistant turn): it keeps no state then.
 */
export function settledConversationId(found: string | undefined, opening: string, answer: readonly Turn[] | undefined): string | undefined {
  if (found !== undefined) return found;
  const first = answer?.find((turn) => turn.role === 'assistant');
  return first && answeredConversationId(opening, first);
}

/**
 * What names a request's conversation before its answers do, for this end user and
 * project (`partition`): the id it carries, or its opening.
 */
export function openingOf(name: ConversationName, partition: (id: string) => string): string {
  if ('id' in name) return name.chained ? name.id : partition(name.id);
  return partition(name.opening);
}

/**
 * The stored conversation a request continues, with its id: the one its id names, or the
 * first of its earlier answers (oldest first) that names a stored one. Undefined when none
 * does: the request opens a conversation, and its answer will name it.
 */
export async function findConversation(
  store: Pick<ConversationStore, 'get'>,
  agentId: string,
  name: ConversationName,
  partition: (id: string) => string,
): Promise<{ id: string; stored: Revisioned<ConversationState> | null } | undefined> {
  if ('id' in name) {
    const id = openingOf(name, partition);
    return { id, stored: (await store.get(agentId, id)) ?? null };
  }
  for (const answer of name.answers()) {
    const id = partition(answeredConversationId(name.opening, answer));
    const stored = await store.get(agentId, id);
    if (stored) return { id, stored };
  }
  return undefined;
}
