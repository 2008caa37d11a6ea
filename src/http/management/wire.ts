/**
 * Domain records → snake_case JSON of the management API. Secrets never pass through
 * here: an agent shows whether an upstream key is set and which extra headers exist,
 * never their values.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  TAG_AUTHORS,
  type Agent,
  type MemorySettings,
  type Org,
  type Reflection,
  type TagAuthor,
  type TokenRecord,
} from '../../domain/types.js';
import { ERRORS } from '../../errors.js';
import type { SearchedReflection } from '../../memory/search-relevance.js';

/*
 * The response schemas of the management API. The wire functions below are typed by
 * them, so the compiler holds each function to its schema, and the OpenAPI document
 * (`openapi.ts`) is generated from them.
 */
export const Time = z.iso.datetime().describe('ISO 8601 instant (UTC)');
export const Kind = z.enum(['factual', 'procedural']);

export const ErrorJson = z
  .object({
    error: z.object({
      message: z.string(),
      type: z.string(),
      code: z.enum(Object.keys(ERRORS) as [keyof typeof ERRORS, ...(keyof typeof ERRORS)[]]),
      param: z.string().nullable().describe('The offending field or query parameter (dotted path), when one is to blame'),
    }),
  })
  .meta({ id: 'Error' });

export const OrgJson = z.object({ id: z.string(), name: z.string(), created_at: Time }).meta({ id: 'Org' });

export const MemoryJson = z
  .object({
    inject: z.boolean(),
    extract: z.boolean(),
    top_k: z.number().int(),
    token_budget: z.number().int(),
    min_score: z.number(),
    extraction_model: z.string().nullable(),
    daily_token_budget: z.number().int().nullable().describe('Tokens per UTC day for extraction and tagging; null: unlimited'),
  })
  .meta({ id: 'MemorySettings' });

export const AgentJson = z
  .object({
    id: z.string(),
    org_id: z.string(),
    name: z.string(),
    type: z.literal('api_provider'),
    upstream: z.object({
      base_url: z.string(),
      api_key_set: z.boolean(),
      headers_set: z.array(z.string()),
      responses_state: z.enum(['service', 'upstream']),
    }),
    memory: MemoryJson,
    base_url: z.string().describe('What the agent uses as its provider base URL'),
    mcp_url: z.string(),
    created_at: Time,
    updated_at: Time,
  })
  .meta({ id: 'Agent' });

export const UpstreamCheckJson = z
  .object({
    ok: z.boolean().describe('The upstream listed its models with the key and headers given'),
    summary: z.string().describe("One sentence in Engram's words (never the upstream's text): what answered, or why nothing did"),
  })
  .meta({ id: 'UpstreamCheckResult' });

export const TokenJson = z
  .object({ id: z.string(), name: z.string(), prefix: z.string(), created_at: Time, revoked_at: Time.nullable(), last_used_at: Time.nullable() })
  .meta({ id: 'Token' });

export const ReflectionJson = z
  .object({
    id: z.string(),
    agent_id: z.string(),
    kind: Kind,
    content: z.string(),
    topic: z.string(),
    tags: z.array(z.string()),
    source: z.enum(['conversation', 'transcript', 'mcp']),
    created_at: Time,
    updated_at: Time,
    last_used_at: Time.nullable(),
    use_count: z.number().int(),
    embedder_id: z.string(),
    origin: z
      .object({ conversation_id: z.string(), turn: z.number().int().nullable(), role: z.enum(['user', 'assistant', 'tool']).nullable() })
      .nullable()
      .describe('Where a learnt reflection came from; null for one stored on purpose'),
    superseded_by: z
      .string()
      .nullable()
      .describe('The reflection that replaced this one (a changed fact); null while current. A superseded one is history: never injected nor found by a search'),
    superseded_at: Time.nullable().describe('When it was superseded; null while current'),
    tags_by: z
      .enum(TAG_AUTHORS as [TagAuthor, ...TagAuthor[]])
      .nullable()
      .describe(
        'Who wrote the subject tags: `extraction` (learnt with them), `tagging` (the background tagging job), `person` (by hand), `agent` (MCP `remember`); null while no one has tagged it',
      ),
    scope: z
      .string()
      .nullable()
      .describe('The project it holds in (the repository a coding CLI worked in, or `x-engram-scope`); null: it holds everywhere'),
    user: z
      .string()
      .nullable()
      .describe("The app's end user who taught it (`x-engram-user`): never shown to another user; null: the agent's own, shared by all its users"),
  })
  .meta({ id: 'Reflection' });

export const ScoredReflectionJson = ReflectionJson.extend({
  relevance: z
    .number()
    .describe(
      'On the scale of the agent’s `min_score` (the search’s `bar`): a request saying the query gets it injected at or above the bar. ' +
        'As injection judges it (a named term’s lift included) for the candidates injection weighs, by meaning alone for the others',
    ),
  vector_score: z.number().describe('The cosine of the query and the reflection (the embedder’s own scale; `relevance` is this moved to the bar’s)'),
  keyword_score: z.number().describe('The keyword (BM25) score, normalised to 0..1 within these results'),
}).meta({ id: 'ScoredReflection' });

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

export function orgWire(org: Org): z.output<typeof OrgJson> {
  return { id: org.id, name: org.name, created_at: isoTime(org.createdAt) };
}

export function memoryWire(memory: MemorySettings): z.output<typeof MemoryJson> {
  return {
    inject: memory.inject,
    extract: memory.extract,
    top_k: memory.topK,
    token_budget: memory.tokenBudget,
    min_score: memory.minScore,
    extraction_model: memory.extractionModel,
    daily_token_budget: memory.dailyTokenBudget ?? null,
  };
}

export function agentWire(agent: Agent, options: { base: string; apiKeySet: boolean }): z.output<typeof AgentJson> {
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

export function tokenWire(token: TokenRecord): z.output<typeof TokenJson> {
  return {
    id: token.id,
    name: token.name,
    prefix: token.prefix,
    created_at: isoTime(token.createdAt),
    revoked_at: isoTime(token.revokedAt),
    last_used_at: isoTime(token.lastUsedAt),
  };
}

export function reflectionWire(reflection: Reflection): z.output<typeof ReflectionJson> {
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
    origin: reflection.origin
      ? { conversation_id: reflection.origin.conversation, turn: reflection.origin.turn ?? null, role: reflection.origin.role ?? null }
      : null,
    superseded_by: reflection.supersededBy ?? null,
    superseded_at: isoTime(reflection.supersededAt ?? null),
    tags_by: reflection.tagsBy ?? null,
    scope: reflection.scope ?? null,
    user: reflection.user ?? null,
  };
}

export function searchedReflectionWire(searched: SearchedReflection): z.output<typeof ScoredReflectionJson> {
  return {
    ...reflectionWire(searched.reflection),
    relevance: searched.relevance,
    vector_score: searched.vectorScore,
    keyword_score: searched.keywordScore,
  };
}
