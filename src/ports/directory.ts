/**
 * Organisations, agents and access tokens: who may call Engram and where their requests
 * go. Records arrive whole, ids and timestamps included (chosen above the port), and
 * secrets arrive sealed or hashed: an adapter stores what it is given and never sees a
 * secret in clear (the upstream key is sealed by `security/vault.ts`, a token is its
 * SHA-256). Every adapter passes `test/contracts/directory.contract.ts`.
 *
 * Organisation names are unique; agent names are unique within an organisation; token
 * hashes are unique. A create that would break one of these rejects with
 * `EngramError('conflict')` and changes nothing.
 */
import type { Agent, Org, TokenRecord } from '../domain/types.js';

/** An agent with its sealed upstream secrets (`AgentSecrets`, sealed and bound to the agent id). */
export interface AgentEntry {
  agent: Agent;
  sealedSecrets: string;
}

export interface TokenLookup {
  token: TokenRecord;
  agent: Agent;
}

export interface Directory {
  createOrg(org: Org): Promise<void>;
  getOrg(idOrName: string): Promise<Org | undefined>;
  /** Oldest first. */
  listOrgs(): Promise<Org[]>;
  /**
   * Deletes the org with its agents and their tokens. Returns the ids of the agents it
   * deleted (their conversations, responses, index and reflections live behind other
   * ports: the caller deletes those), or undefined when there is no such org.
   */
  deleteOrg(id: string): Promise<string[] | undefined>;

  /** Rejects with `EngramError('not_found')` when the org does not exist. */
  createAgent(entry: AgentEntry): Promise<void>;
  /** `idOrName` matches an agent id, or a name within the org; an id wins over a name. */
  getAgent(orgId: string, idOrName: string): Promise<Agent | undefined>;
  /** The agent with this id, in whatever org, with its sealed secrets. */
  agentEntry(agentId: string): Promise<AgentEntry | undefined>;
  /** Oldest first. */
  listAgents(orgId: string): Promise<Agent[]>;
  /**
   * Replaces the agent (of that org) with `change(current)`, atomically: when another
   * writer changed it in between, `change` runs again on the newer record. Undefined when
   * there is no such agent. `change` must keep `id` and `orgId`.
   */
  updateAgent(orgId: string, agentId: string, change: (current: AgentEntry) => AgentEntry): Promise<Agent | undefined>;
  /** Deletes the agent and its tokens. */
  deleteAgent(orgId: string, agentId: string): Promise<boolean>;

  /** Rejects with `EngramError('not_found')` when the agent does not exist. */
  createToken(token: TokenRecord, tokenHash: string): Promise<void>;
  /**
   * The live (not revoked) token with this hash, and its agent. Adapters record the use
   * in `lastUsedAt`, at most once a minute per token, so the lookup on every proxied
   * request stays a read.
   */
  findToken(tokenHash: string): Promise<TokenLookup | undefined>;
  /**
   * The revoked token with this hash, when its record is kept (revoked tokens are, until
   * their agent is deleted); undefined for a live or unknown hash. Only for telling the
   * holder of a revoked token why it is refused (`control/auth.ts`).
   */
  revokedToken(tokenHash: string): Promise<TokenRecord | undefined>;
  /** Oldest first, revoked ones included. */
  listTokens(agentId: string): Promise<TokenRecord[]>;
  /** Token id -> stored hash, revoked ones included: for an export (hashes only, never a token). */
  tokenHashes(agentId: string): Promise<Map<string, string>>;
  /** False when the agent has no such live token. */
  revokeToken(agentId: string, tokenId: string, at: number): Promise<boolean>;

  close(): Promise<void>;
}
