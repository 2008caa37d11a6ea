/** Pure domain records shared by every layer. No I/O here. */

export type ReflectionKind = 'factual' | 'procedural';
export const REFLECTION_KINDS: readonly ReflectionKind[] = ['factual', 'procedural'];
export type ReflectionSource = 'conversation' | 'transcript' | 'mcp';
/**
 * Who wrote a reflection's subject tags: the extraction model while learning it, the
 * background tagging job, a person by hand (the management API, the dashboard), or the
 * agent itself (MCP `remember`).
 */
export type TagAuthor = 'extraction' | 'tagging' | 'person' | 'agent';
export const TAG_AUTHORS: readonly TagAuthor[] = ['extraction', 'tagging', 'person', 'agent'];
export type ProtocolId = 'chat-completions' | 'messages' | 'responses';

export interface Org {
  id: string;
  name: string;
  createdAt: number;
}

export interface UpstreamSettings {
  /** Base that `/v1/...` is appended to, e.g. `https://api.openai.com`. */
  baseUrl: string;
  /**
   * Names of the extra headers sent on every upstream request (an OpenRouter referer,
   * Azure's `api-key`, a gateway's auth header). Their values may be credentials: they
   * are sealed with the key (`AgentSecrets.upstreamHeaders`), never stored in clear.
   */
  headerNames: string[];
  /**
   * Header values in clear, as versions before sealed headers stored them. Read only to
   * move them into the sealed secrets (`Control.sealClearHeaders`, at start-up); never written.
   */
  clearHeaders?: Record<string, string>;
  /**
   * Who keeps Responses chains (`previous_response_id`): `service`, Engram expands the
   * chain into the full input (upstreams that keep no state); `upstream`, the id is
   * forwarded and the upstream expands it (OpenAI itself).
   */
  responsesState: ResponsesState;
  /**
   * Who set `baseUrl`: the operator (the admin token: CLI, management API) or a dashboard
   * user. A dashboard user is not trusted with the operator's network: every request to
   * a user's upstream is sent under the dashboard's address policy
   * (`ENGRAM_DASHBOARD_UPSTREAM_ALLOW_PRIVATE`), checked on the address each connection
   * resolves to, not only when the URL was saved. Agents stored before this was kept read
   * as the operator's.
   */
  setBy: UpstreamOwner;
}

export type ResponsesState = 'service' | 'upstream';

/** Who set an agent's upstream URL (`UpstreamSettings.setBy`). */
export type UpstreamOwner = 'operator' | 'user';

export interface MemorySettings {
  /** Inject reflections into forwarded requests. */
  inject: boolean;
  /** Learn reflections from settled conversations. */
  extract: boolean;
  topK: number;
  /** Upper bound on the injected block, in estimated tokens. */
  tokenBudget: number;
  /** Minimum cosine similarity for a reflection found by vector alone. */
  minScore: number;
  /** Model used for extraction; null means the conversation's own model. */
  extractionModel: string | null;
  /**
   * Input plus output tokens Engram's extraction and tagging calls for this agent may use
   * per UTC day; null: unlimited. Once a day's spend reaches it, jobs wait (never dropped)
   * until the next 00:00 UTC. Agents stored before the setting existed lack it (read as null).
   */
  dailyTokenBudget?: number | null;
}

export interface Agent {
  id: string;
  orgId: string;
  name: string;
  type: 'api_provider';
  upstream: UpstreamSettings;
  memory: MemorySettings;
  createdAt: number;
  updatedAt: number;
}

/** The upstream API key travels separately from the agent record: it is stored encrypted. */
export interface AgentSecrets {
  upstreamApiKey: string;
  /** Values of the extra upstream headers (`UpstreamSettings.headerNames`). */
  upstreamHeaders: Record<string, string>;
}

export interface TokenRecord {
  id: string;
  agentId: string;
  orgId: string;
  name: string;
  /** First characters of the token, to recognise it in listings (`egm_AbCd…`). */
  prefix: string;
  createdAt: number;
  revokedAt: number | null;
  lastUsedAt: number | null;
}

/**
 * Where a learnt reflection came from: the conversation, and the turn (its index in the
 * conversation's transcript) and role the extraction model cited. A reflection planted by
 * text in a tool result (a fetched web page saying "remember that ...") can be traced to
 * it, and everything learnt from one conversation purged.
 */
export interface ReflectionOrigin {
  conversation: string;
  turn?: number;
  role?: 'user' | 'assistant' | 'tool';
}

export interface Reflection {
  id: string;
  agentId: string;
  kind: ReflectionKind;
  content: string;
  topic: string;
  tags: string[];
  source: ReflectionSource;
  createdAt: number;
  updatedAt: number;
  lastUsedAt: number | null;
  useCount: number;
  embedderId: string;
  /** Absent for reflections stored on purpose (MCP `remember`, by hand, imported) and older ones. */
  origin?: ReflectionOrigin;
  /**
   * The id of the reflection that replaced this one (a changed fact, DESIGN section 5),
   * and when. Both absent on a current reflection. A superseded one is kept as history:
   * listed, never injected nor found by a search, restorable by hand.
   */
  supersededBy?: string;
  supersededAt?: number;
  /** Who wrote the subject tags; absent while no one has tagged it (the tagging job's work). */
  tagsBy?: TagAuthor;
  /**
   * The project this holds in (DESIGN section 13): the repository a coding CLI worked in,
   * or `x-engram-scope`. Absent: it holds everywhere (about the person or the tools, or
   * learnt where no project was named).
   */
  scope?: string;
  /**
   * The app's end user who taught it (`x-engram-user`). Absent: the agent's own, shared by
   * all its users. Never injected, recalled, listed or indexed for another user.
   */
  user?: string;
}

/**
 * What a conversation may see (DESIGN section 13): reflections without a scope or of its
 * scope, and without a user or of its user. No scope: only what holds everywhere; no
 * user: only the agent's own (absolute isolation: a user's reflections never reach the
 * agent's traffic either).
 */
export interface Visibility {
  scope?: string;
  user?: string;
}

export function isVisible(reflection: Pick<Reflection, 'scope' | 'user'>, visibility: Visibility): boolean {
  return (
    (reflection.scope === undefined || reflection.scope === visibility.scope) &&
    (reflection.user === undefined || reflection.user === visibility.user)
  );
}

export interface ScoredReflection {
  reflection: Reflection;
  /** Fused hybrid score in [0, 1], relative to the result set. */
  score: number;
  /** Cosine similarity of the query vector and the reflection vector. */
  vectorScore: number;
  /** Normalised keyword (BM25) score in [0, 1]; 0 when the keyword search missed. */
  keywordScore: number;
  /**
   * Share of the query's words the reflection matches, exactly or by meaning, weighted by
   * their rarity, in [0, 1] (the soft-match reranker's, absolute: not relative to the
   * result set). Absent when no reranker ran.
   */
  matchScore?: number;
}

export const DEFAULT_MEMORY_SETTINGS: MemorySettings = {
  inject: true,
  extract: true,
  topK: 5,
  tokenBudget: 800,
  minScore: 0.2,
  extractionModel: null,
  dailyTokenBudget: null,
};
