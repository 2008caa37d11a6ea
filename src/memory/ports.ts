/**
 * The three ports of Engram's architecture (DESIGN section 2). Each has an embedded
 * adapter (SQLite) and a distributed one (NATS / Weaviate); every adapter must pass the
 * shared contract suite in `test/contracts/`.
 *
 * All methods are async so network-backed adapters fit; embedded adapters resolve
 * immediately.
 */
import type {
  Agent,
  AgentSecrets,
  Org,
  Reflection,
  ReflectionKind,
  ScoredReflection,
  TokenRecord,
} from '../domain/types.js';
import type { ConversationState } from '../domain/conversation-state.js';
import type { ResponseRecord } from '../domain/response-record.js';

// ---------------------------------------------------------------------------------
// Event bus
// ---------------------------------------------------------------------------------

export interface PublishOptions {
  /** Do not deliver before this epoch-ms instant (used to wait for a conversation to settle). */
  notBefore?: number;
  /**
   * Deduplication id: a second publish with the same id on the same subject while the
   * first is still stored is a no-op (JetStream's `Nats-Msg-Id`).
   */
  msgId?: string;
}

export interface BusMessage<T = unknown> {
  /** Stable id of the stored message (sequence number as a string). */
  readonly id: string;
  readonly subject: string;
  readonly payload: T;
  /** 1 on first delivery, incremented on every redelivery. */
  readonly attempt: number;
  readonly publishedAt: number;
  /** Done: the message is removed and never delivered again. */
  ack(): Promise<void>;
  /** Failed this time: redeliver after `delayMs` (default: the consumer's backoff). */
  nak(delayMs?: number): Promise<void>;
  /** Give up now: the message becomes a dead letter with this reason. */
  term(reason: string): Promise<void>;
}

export interface ConsumerOptions {
  /** Unacked messages are redelivered this long after delivery. */
  ackWaitMs: number;
  /** After this many deliveries without ack the message becomes a dead letter. */
  maxDeliver: number;
  /** Messages handled at once by this consumer. */
  concurrency: number;
  /** Delay before redelivery after a `nak()` without a delay or a thrown handler, by attempt. */
  backoffMs: (attempt: number) => number;
}

export interface DeadLetter {
  id: string;
  subject: string;
  payload: unknown;
  attempts: number;
  reason: string;
  publishedAt: number;
  failedAt: number;
}

export interface Subscription {
  /** Stops fetching; resolves once in-flight handlers have finished. */
  stop(): Promise<void>;
}

/**
 * Durable work queue with JetStream semantics: at-least-once delivery, explicit ack,
 * redelivery after `ackWaitMs`, at most `maxDeliver` deliveries, then a dead letter.
 * Published messages survive a process crash. A handler that throws is treated as
 * `nak()`. Handlers must be idempotent.
 */
export interface EventBus {
  publish(subject: string, payload: unknown, options?: PublishOptions): Promise<void>;
  consume<T>(
    subject: string,
    handler: (message: BusMessage<T>) => Promise<void>,
    options?: Partial<ConsumerOptions>,
  ): Subscription;
  /** Messages stored and not yet acked or dead-lettered, for a subject. */
  pending(subject: string): Promise<number>;
  deadLetters(subject?: string): Promise<DeadLetter[]>;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------
// Control store
// ---------------------------------------------------------------------------------

export interface NewAgent {
  orgId: string;
  name: string;
  /** `responsesState` defaults to `service`. */
  upstream: Omit<Agent['upstream'], 'responsesState'> & Partial<Pick<Agent['upstream'], 'responsesState'>>;
  memory: Agent['memory'];
  secrets: AgentSecrets;
}

export interface AgentPatch {
  name?: string;
  upstream?: Partial<Agent['upstream']>;
  memory?: Partial<Agent['memory']>;
  secrets?: Partial<AgentSecrets>;
}

export interface TokenLookup {
  token: TokenRecord;
  agent: Agent;
}

/**
 * Organisations, agents, access tokens, conversation state and response chains. Secrets passed in are
 * stored encrypted (upstream keys) or as hashes (tokens): an adapter never writes them
 * in clear. Names of organisations are unique; agent names are unique within an org.
 */
export interface ControlStore {
  createOrg(name: string): Promise<Org>;
  getOrg(idOrName: string): Promise<Org | undefined>;
  listOrgs(): Promise<Org[]>;
  /** Deletes the org with its agents, tokens and conversations. */
  deleteOrg(id: string): Promise<boolean>;

  createAgent(agent: NewAgent): Promise<Agent>;
  /** `idOrName` matches an agent id, or a name within the org. */
  getAgent(orgId: string, idOrName: string): Promise<Agent | undefined>;
  listAgents(orgId: string): Promise<Agent[]>;
  updateAgent(orgId: string, agentId: string, patch: AgentPatch): Promise<Agent | undefined>;
  deleteAgent(orgId: string, agentId: string): Promise<boolean>;
  /** Decrypted secrets, for the upstream call only. */
  getAgentSecrets(agentId: string): Promise<AgentSecrets | undefined>;

  /** Stores the token's hash; returns the record (the clear token is never stored). */
  createToken(agentId: string, tokenHash: string, prefix: string, name: string): Promise<TokenRecord>;
  /** Finds a live (not revoked) token by its hash, with its agent. */
  findToken(tokenHash: string): Promise<TokenLookup | undefined>;
  listTokens(agentId: string): Promise<TokenRecord[]>;
  revokeToken(agentId: string, tokenId: string): Promise<boolean>;

  getConversation(agentId: string, conversationId: string): Promise<ConversationState | undefined>;
  /** Writes the whole state; last writer wins. */
  putConversation(state: ConversationState): Promise<void>;
  /** Whether any conversation of the agent has an id starting with `idPrefix`. */
  hasConversation(agentId: string, idPrefix: string): Promise<boolean>;
  /** Deletes conversations whose `lastActivityAt` is before `idleSince`; returns how many. */
  pruneConversations(idleSince: number): Promise<number>;

  /**
   * Keeps a proxied response for chaining and reading back. Its content is stored
   * encrypted (it holds the conversation in clear). Idempotent on (agent, id).
   */
  putResponse(record: ResponseRecord): Promise<void>;
  /** A response of this agent; another agent's ids are not found. */
  getResponse(agentId: string, id: string): Promise<ResponseRecord | undefined>;
  deleteResponse(agentId: string, id: string): Promise<boolean>;
  /** Deletes responses created before `createdBefore`; returns how many. */
  pruneResponses(createdBefore: number): Promise<number>;

  getIndex(agentId: string): Promise<string | undefined>;
  putIndex(agentId: string, markdown: string): Promise<void>;

  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------
// Reflection store
// ---------------------------------------------------------------------------------

export interface StoredReflection extends Reflection {
  vector: Float32Array;
}

export interface HybridQuery {
  /** Keyword query (free text; the adapter tokenises it). May be empty. */
  text: string;
  /** Query vector from the same embedder as the stored vectors. */
  vector: Float32Array;
  limit: number;
  kind?: ReflectionKind;
  /** Weight of the vector score in the fusion, 0..1 (Weaviate's `alpha`). */
  alpha?: number;
}

export interface ListQuery {
  limit?: number;
  offset?: number;
  kind?: ReflectionKind;
}

export type ReflectionPatch = Partial<Pick<Reflection, 'kind' | 'content' | 'topic' | 'tags'>> & {
  vector?: Float32Array;
  embedderId?: string;
};

/**
 * Reflections with their vectors, per agent (one tenant per agent). `upsert` is
 * idempotent on `id`. Searches never cross agents.
 */
export interface ReflectionStore {
  upsert(reflections: StoredReflection[]): Promise<void>;
  get(agentId: string, id: string): Promise<Reflection | undefined>;
  /** Most recently updated first. */
  list(agentId: string, query?: ListQuery): Promise<Reflection[]>;
  count(agentId: string): Promise<number>;
  /** Applies the patch and stamps `updatedAt` (an empty patch only refreshes it). */
  update(agentId: string, id: string, patch: ReflectionPatch): Promise<Reflection | undefined>;
  delete(agentId: string, id: string): Promise<boolean>;
  deleteAgent(agentId: string): Promise<void>;
  /**
   * Hybrid search: cosine similarity fused with keyword (BM25) relevance by relative
   * score fusion, best first. Results carry both raw scores.
   */
  search(agentId: string, query: HybridQuery): Promise<ScoredReflection[]>;
  /** Pure vector neighbours, for near-duplicate checks. */
  nearest(agentId: string, vector: Float32Array, limit: number): Promise<ScoredReflection[]>;
  /**
   * Counts a use of each reflection. Adapters may batch these writes: reads through the
   * same store see the use at once, other readers within about a second, and a crash
   * may lose about the last second of uses.
   */
  markUsed(agentId: string, ids: string[], at: number): Promise<void>;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------
// Embedder
// ---------------------------------------------------------------------------------

export interface Embedder {
  /** Recorded on each vector; a change of embedder triggers re-embedding. */
  readonly id: string;
  readonly dimensions: number;
  /** Unit-length vectors, one per text. */
  embed(texts: string[]): Promise<Float32Array[]>;
}

// ---------------------------------------------------------------------------------
// Upstream provider
// ---------------------------------------------------------------------------------

export interface UpstreamRequest {
  url: string;
  method: 'GET' | 'POST' | 'HEAD' | 'DELETE';
  headers: Record<string, string>;
  body?: Buffer | string;
  signal?: AbortSignal;
}

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body as it arrives; must be consumed or destroyed. */
  body: import('node:stream').Readable;
}

/**
 * HTTP client for upstream providers. Rejects with `EngramError('upstream_unreachable')`
 * when no connection can be made, `EngramError('upstream_timeout')` when headers or a
 * body chunk take longer than the configured timeout, and an `AbortError` when the
 * signal fires. Any HTTP status resolves.
 */
export interface UpstreamClient {
  send(request: UpstreamRequest): Promise<UpstreamResponse>;
  /**
   * The same translation for an error raised later, while the response body is read:
   * an `EngramError` from the catalogue, or the error itself when it is an abort.
   */
  failure(error: unknown): unknown;
  close(): Promise<void>;
}
