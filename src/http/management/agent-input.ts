/**
 * Agent bodies of the management API (snake_case) → `NewAgent` / `AgentPatch`.
 */
import type { z } from 'zod';
import type { MemorySettings, ResponsesState } from '../../domain/types.js';
import { hostRefusal, type AddressPolicy } from '../../security/address-policy.js';
import { DEFAULT_MEMORY_SETTINGS } from '../../domain/types.js';
import type { AgentPatch, NewAgent } from '../../domain/directory-records.js';
import { AgentBody, AgentPatchBody, invalid, optionalString, parseBody, requiredString, resourceName } from './validate.js';

/*
 * Bodies are parsed with their documented schema first (`parseBody`): fields, types, ranges
 * and enums are the schema's. The checks here add what a schema cannot say: names and
 * strings that are blank or deceptive, the upstream URL's form and address, header names.
 */
type UpstreamJson = NonNullable<z.output<typeof AgentPatchBody>['upstream']>;
type MemoryJson = NonNullable<z.output<typeof AgentBody>['memory']>;

/** Headers the upstream client manages itself; a per-agent value would break the request. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade']);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export interface UpstreamInput {
  baseUrl?: string;
  apiKey?: string;
  headers?: Record<string, string>;
  responsesState?: ResponsesState;
}

/**
 * Endpoint paths a pasted URL may end in. Engram appends `/v1/<endpoint>` to the base
 * itself, so a base ending in one would be called as `.../chat/completions/v1/chat/completions`.
 */
const ENDPOINT_PATH = /(?:\/v1)?\/(?:chat\/completions|completions|messages(?:\/count_tokens)?|responses|embeddings|models)$/;

/**
 * The base that `/v1/...` is appended to. Trailing slashes and a trailing `/v1` are
 * dropped, because users paste `https://api.openai.com/v1` as often as the bare host,
 * and every path Engram calls (`adapter.upstreamPath`) starts with `/v1/`: a base that
 * kept its `/v1` could only ever be called as `/v1/v1/...`. Gateways that mount an
 * OpenAI-compatible API under a prefix keep the prefix (`https://openrouter.ai/api/v1`
 * becomes `https://openrouter.ai/api`). An endpoint path is refused rather than
 * trimmed: the user learns what the base is, and a misread URL is not silently rewritten.
 */
export function upstreamBaseUrl(raw: string, param: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw invalid(param, `\`${param}\` must be an http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalid(param, `\`${param}\` must be an http(s) URL, got "${raw}"`);
  }
  if (url.username || url.password) {
    throw invalid(param, `\`${param}\` must not carry credentials; put the key in \`upstream.api_key\``);
  }
  if (url.search || url.hash) throw invalid(param, `\`${param}\` must not have a query or fragment`);
  const trimmed = url.pathname.replace(/\/+$/, '');
  const endpoint = ENDPOINT_PATH.exec(trimmed);
  if (endpoint) {
    const base = url.origin + trimmed.slice(0, endpoint.index).replace(/\/v1$/, '');
    throw invalid(
      param,
      `\`${param}\` is an endpoint (${endpoint[0]}), not the provider's base: use ${base} — Engram appends /v1/chat/completions, /v1/messages or /v1/responses to the base itself`,
    );
  }
  return url.origin + trimmed.replace(/\/v1$/, '');
}

/**
 * Refuses an upstream at an address Engram must not be pointed at (server-side request
 * forgery): link-local and cloud metadata always, loopback and private ranges when the
 * operator forbids them. Names are checked again on the address they resolve to when
 * Engram connects.
 */
export function refuseForbiddenUpstream(baseUrl: string, policy: AddressPolicy): void {
  const why = hostRefusal(new URL(baseUrl), policy);
  if (why) throw invalid('upstream.base_url', `The upstream base URL is refused: ${why}`);
}

function headerMap(headers: Record<string, string>, param: string): Record<string, string> {
  for (const [name, value] of Object.entries(headers)) {
    const where = `${param}.${name}`;
    if (!HEADER_NAME.test(name)) throw invalid(where, `\`${name}\` is not a valid header name`);
    if (RESERVED_HEADERS.has(name.toLowerCase())) throw invalid(where, `\`${name}\` is set by Engram itself`);
    if (/[\r\n\0]/.test(value)) throw invalid(where, `\`${where}\` must be a string without line breaks`);
  }
  return headers;
}

function parseUpstream(object: UpstreamJson, requireBaseUrl: boolean): UpstreamInput {
  const rawBase = requireBaseUrl
    ? requiredString(object, 'base_url', 'upstream')
    : optionalString(object, 'base_url', 'upstream');
  // An empty key is allowed: local upstreams (Ollama, vLLM) often need none.
  const apiKey = optionalString(object, 'api_key', 'upstream', { allowEmpty: true, max: 4096 });
  if (apiKey !== undefined && /[\r\n\0]/.test(apiKey)) {
    throw invalid('upstream.api_key', '`upstream.api_key` must not contain line breaks');
  }
  return {
    responsesState: object.responses_state,
    baseUrl: rawBase === undefined ? undefined : upstreamBaseUrl(rawBase, 'upstream.base_url'),
    apiKey: apiKey?.trim(),
    headers: object.headers === undefined ? undefined : headerMap(object.headers, 'upstream.headers'),
  };
}

function parseMemory(object: MemoryJson): Partial<MemorySettings> {
  const model = object.extraction_model === null ? null : optionalString(object, 'extraction_model', 'memory', { max: 200 });
  const memory: Partial<MemorySettings> = {
    inject: object.inject,
    extract: object.extract,
    topK: object.top_k,
    tokenBudget: object.token_budget,
    minScore: object.min_score,
    extractionModel: model === undefined ? undefined : model === null ? null : model.trim(),
    // null lifts the budget; absent leaves it as it is.
    dailyTokenBudget: object.daily_token_budget,
  };
  // Absent fields stay absent, so a patch only touches what it names.
  for (const key of Object.keys(memory) as (keyof MemorySettings)[]) {
    if (memory[key] === undefined) delete memory[key];
  }
  return memory;
}

export function parseNewAgent(rawBody: unknown, orgId: string): NewAgent {
  const body = parseBody(AgentBody, rawBody);
  const name = resourceName(body, 'name', true);
  const upstream = parseUpstream(body.upstream, true);
  const memory = body.memory === undefined ? {} : parseMemory(body.memory);
  return {
    orgId,
    name,
    upstream: { baseUrl: upstream.baseUrl as string, headers: upstream.headers ?? {}, responsesState: upstream.responsesState ?? 'service' },
    memory: { ...DEFAULT_MEMORY_SETTINGS, ...memory },
    secrets: { upstreamApiKey: upstream.apiKey ?? '' },
  };
}

export function parseAgentPatch(rawBody: unknown): AgentPatch {
  // `type` may be repeated as is (the schema allows only the one there is), but an agent never changes type.
  const body = parseBody(AgentPatchBody, rawBody);
  const patch: AgentPatch = {};
  const name = resourceName(body, 'name', false);
  if (name !== undefined) patch.name = name;
  if (body.upstream !== undefined) {
    const upstream = parseUpstream(body.upstream, false);
    const settings: AgentPatch['upstream'] = {};
    if (upstream.baseUrl !== undefined) settings.baseUrl = upstream.baseUrl;
    if (upstream.headers !== undefined) settings.headers = upstream.headers;
    if (upstream.responsesState !== undefined) settings.responsesState = upstream.responsesState;
    if (Object.keys(settings).length > 0) patch.upstream = settings;
    if (upstream.apiKey !== undefined) patch.secrets = { upstreamApiKey: upstream.apiKey };
  }
  if (body.memory !== undefined) {
    const memory = parseMemory(body.memory);
    if (Object.keys(memory).length > 0) patch.memory = memory;
  }
  return patch;
}
