/**
 * Domain records → snake_case JSON of the management API. Secrets never pass through
 * here: an agent shows whether an upstream key is set and which extra headers exist,
 * never their values.
 */
import type { FastifyRequest } from 'fastify';
import type { Agent, MemorySettings, Org, Reflection, ScoredReflection, TokenRecord } from '../../domain/types.js';

/** Instants travel as ISO 8601 strings; the domain keeps epoch milliseconds. */
export function isoTime(ms: number): string;
export function isoTime(ms: number | null): string | null;
export function isoTime(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/**
 * The address clients reach this server by, taken from the request so it is right
 * behind whatever host and port the server listens on (and behind a proxy, when Fastify
 * is told to trust it).
 */
export function publicBase(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`;
}

export function agentUrls(base: string, agent: Pick<Agent, 'id' | 'orgId'>): { base_url: string; mcp_url: string } {
  const baseUrl = `${base}/v0/orgs/${encodeURIComponent(agent.orgId)}/agents/${encodeURIComponent(agent.id)}`;
  return { base_url: baseUrl, mcp_url: `${baseUrl}/v0/mcp` };
}

export function orgWire(org: Org): Record<string, unknown> {
  return { id: org.id, name: org.name, created_at: isoTime(org.createdAt) };
}

export function memoryWire(memory: MemorySettings): Record<string, unknown> {
  return {
    inject: memory.inject,
    extract: memory.extract,
    top_k: memory.topK,
    token_budget: memory.tokenBudget,
    min_score: memory.minScore,
    extraction_model: memory.extractionModel,
  };
}

export function agentWire(agent: Agent, options: { base: string; apiKeySet: boolean }): Record<string, unknown> {
  return {
    id: agent.id,
    org_id: agent.orgId,
    name: agent.name,
    type: agent.type,
    upstream: {
      base_url: agent.upstream.baseUrl,
      api_key_set: options.apiKeySet,
      headers_set: [...agent.upstream.headerNames],
      responses_state: agent.upstream.responsesState,
    },
    memory: memoryWire(agent.memory),
    ...agentUrls(options.base, agent),
    created_at: isoTime(agent.createdAt),
    updated_at: isoTime(agent.updatedAt),
  };
}

export function tokenWire(token: TokenRecord): Record<string, unknown> {
  return {
    id: token.id,
    name: token.name,
    prefix: token.prefix,
    created_at: isoTime(token.createdAt),
    revoked_at: isoTime(token.revokedAt),
    last_used_at: isoTime(token.lastUsedAt),
  };
}

export function reflectionWire(reflection: Reflection): Record<string, unknown> {
  return {
    id: reflection.id,
    agent_id: reflection.agentId,
    kind: reflection.kind,
    content: reflection.content,
    topic: reflection.topic,
    tags: reflection.tags,
    source: reflection.source,
    created_at: isoTime(reflection.createdAt),
    updated_at: isoTime(reflection.updatedAt),
    last_used_at: isoTime(reflection.lastUsedAt),
    use_count: reflection.useCount,
    embedder_id: reflection.embedderId,
    // Where a learnt reflection came from; null for one stored on purpose.
    origin: reflection.origin
      ? { conversation_id: reflection.origin.conversation, turn: reflection.origin.turn ?? null, role: reflection.origin.role ?? null }
      : null,
  };
}

export function scoredReflectionWire(scored: ScoredReflection): Record<string, unknown> {
  return {
    ...reflectionWire(scored.reflection),
    score: scored.score,
    vector_score: scored.vectorScore,
    keyword_score: scored.keywordScore,
  };
}
