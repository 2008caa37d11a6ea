/**
 * Each agent's root memory index (DESIGN section 3), as last rebuilt: read on the first
 * turn of every conversation with Engram's tools and at session start, rebuilt after
 * writes. A put replaces the whole text (the latest rebuild wins: every rebuild reads all
 * reflections). Every adapter passes `test/contracts/root-index.contract.ts`.
 */
export interface RootIndexStore {
  get(agentId: string): Promise<string | undefined>;
  put(agentId: string, markdown: string): Promise<void>;
  delete(agentId: string): Promise<void>;
  close(): Promise<void>;
}
