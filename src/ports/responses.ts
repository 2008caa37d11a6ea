/**
 * Responses-API records kept for chaining (`previous_response_id`) and reading back,
 * shared by every replica. The record's content (it holds the conversation in clear)
 * arrives sealed (`security/vault.ts`); the adapter stores it as given. Idempotent on
 * (agent, id). Every adapter passes `test/contracts/responses.contract.ts`.
 */

export interface StoredResponse {
  id: string;
  agentId: string;
  conversationId: string;
  previousResponseId: string | null;
  createdAt: number;
  /** Input, output and body, sealed and bound to the agent and response id. Any size. */
  sealed: string;
}

export interface ResponseStore {
  put(record: StoredResponse): Promise<void>;
  /** A response of this agent; another agent's ids are not found. */
  get(agentId: string, id: string): Promise<StoredResponse | undefined>;
  delete(agentId: string, id: string): Promise<boolean>;
  deleteAgent(agentId: string): Promise<void>;
  /** Deletes responses created before `createdBefore`; returns how many. */
  prune(createdBefore: number): Promise<number>;
  close(): Promise<void>;
}
