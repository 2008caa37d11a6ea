/**
 * A client's chore: a request a coding client sends beside its conversation for its own
 * bookkeeping, like the title Claude Code asks for at the start of each session (its
 * session id, the user's first prompt framed as data, a JSON schema for the answer, no
 * tools). It is no turn of the user's conversation: memory is neither injected into it
 * (the title would not use it, and tokens are spent) nor learnt from it (it restates the
 * prompt the real conversation carries, without the project that conversation names).
 *
 * Only requests of a client session count, so an app's own structured-output call (no
 * session signal) keeps its memory. A client's profile may name chores of its own
 * (`ClientProfile.chores`), which count whatever the request's session.
 */
import { sessionDigestOf } from '../control/conversation-id.js';
import type { ConversationReader, JsonObject, MessageKinds, RequestCodec } from '../protocols/types.js';
import { CLIENTS } from '../clients/index.js';
import type { ClientProfile } from '../clients/types.js';

export function isClientChore(adapter: RequestCodec & MessageKinds & ConversationReader, body: JsonObject, conversationId: string, clients: readonly ClientProfile[] = CLIENTS): boolean {
  const generic = sessionDigestOf(conversationId) !== undefined && adapter.structuredAnswer(body) && adapter.offeredTools(body).length === 0;
  return generic || clients.some(({ chores }) => chores?.some((chore) => chore(adapter, body)));
}
