/**
 * Read-modify-write of one conversation's state over the revision-checked port: the
 * change is re-applied to the newer state whenever another writer came first, so no
 * writer's change is lost and none is applied to a state it did not see.
 */
import type { ConversationState } from '../domain/conversation-state.js';
import type { ConversationStore, Revisioned } from '../ports/conversations.js';

/** A change to apply: the new state, or undefined to leave the conversation as it is. */
export type ConversationChange = (current: ConversationState | undefined) => ConversationState | undefined;

export class ConversationContentionError extends Error {
  override name = 'ConversationContentionError';
}

/** Far more than concurrent writers of one conversation ever are (a request, a job, an upload). */
const MAX_ATTEMPTS = 50;

/**
 * Applies `change` to the stored state until the write lands on the revision it read.
 * Returns the state written, or the current one when `change` left it alone. `known` is
 * the state as the caller read it (null: read as absent), tried first to save a read in
 * the common case where nobody wrote since.
 */
export async function updateConversation(
  store: ConversationStore,
  agentId: string,
  id: string,
  change: ConversationChange,
  known?: Revisioned<ConversationState> | null,
): Promise<ConversationState | undefined> {
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const current = attempt === 1 && known !== undefined ? (known ?? undefined) : await store.get(agentId, id);
    const next = change(current?.value);
    if (next === undefined) return current?.value;
    if ((await store.put(next, current?.revision)) !== undefined) return next;
    // Another writer came first: back off a little, more with every collision.
    if (attempt > 2) await new Promise((resolve) => setTimeout(resolve, Math.random() * attempt));
  }
  throw new ConversationContentionError(`Conversation ${id} kept changing under ${MAX_ATTEMPTS} attempts to update it`);
}
