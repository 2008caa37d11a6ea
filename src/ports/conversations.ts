/**
 * Conversation state that outlives one request (DESIGN section 2): the blocks to
 * re-apply, the extraction watermark, activity times. Several writers touch one
 * conversation at once (a request settling, an extraction job moving the watermark, a
 * transcript upload, the same conversation on another replica), so a write names the
 * revision it read and fails when another writer came first: the caller reads again and
 * re-applies its change (`control/conversation-updates.ts`). That maps onto NATS KV
 * `update(key, value, revision)` and SQLite `UPDATE ... WHERE revision = ?`. Every
 * adapter passes `test/contracts/conversations.contract.ts`.
 */
import type { ConversationState } from '../domain/conversation-state.js';

/** A stored value and the revision it was stored at (opaque: compare for equality only). */
export interface Revisioned<T> {
  value: T;
  revision: number;
}

export interface ConversationStore {
  get(agentId: string, id: string): Promise<Revisioned<ConversationState> | undefined>;
  /**
   * Stores `state` if the conversation is still at revision `expected` (undefined: it
   * must not exist yet). Returns the new revision, or undefined when another writer
   * came first (nothing is written then).
   */
  put(state: ConversationState, expected: number | undefined): Promise<number | undefined>;
  /** Deletes conversations (and session marks) whose last activity is before `idleSince`; returns how many conversations. */
  prune(idleSince: number): Promise<number>;
  /** Deletes every conversation and session mark of the agent. */
  deleteAgent(agentId: string): Promise<void>;
  /**
   * Records that a client session (its digest, `control/conversation-id.ts`) talked to the
   * agent through the proxy, so a transcript of that session uploaded later is known to
   * have been learnt from already.
   */
  markSession(agentId: string, sessionDigest: string, at: number): Promise<void>;
  hasSession(agentId: string, sessionDigest: string): Promise<boolean>;
  close(): Promise<void>;
}
