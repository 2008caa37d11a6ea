/**
 * A client's chore: a request a coding client sends beside its conversation for its own
 * bookkeeping, like the title Claude Code asks for at the start of each session (the first
 * prompt framed as data, a JSON schema for the answer, no tools). Memory is neither injected
 * into it (wasted tokens) nor learnt from it (it restates the real conversation's prompt).
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
