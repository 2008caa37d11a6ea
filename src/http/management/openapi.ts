/**
 * `GET /v0/openapi.json`: the management API as an OpenAPI 3.1 document, generated from
 * the zod schemas the routes validate bodies with (validate.ts, reflections.ts) and type
 * their answers with (wire.ts, dead-letters.ts, jobs.ts). Served without a token, like
 * `/healthz`: it describes shapes and holds no data, and it is what a client generator or
 * an operator without credentials starts from.
 *
 * `OPERATIONS` lists every management route; `test/http/openapi.test.ts` walks the routes
 * Fastify registered and fails on one missing here, and validates real answers against
 * the schemas.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { ENGRAM_VERSION } from '../../version.js';
import { DeadLetterJson, RetriedJson } from './dead-letters.js';
import { JobsJson } from './jobs.js';
import { MemberAddedJson, MemberBody, MemberInvitedJson, MemberJson, MemberRemovedJson } from './members.js';
import { MAX_REQUESTS_LIMIT, OUTCOMES, RequestJson, RequestPageJson } from './requests.js';
import { NewReflectionBody, REFLECTION_STATUSES, ReflectionPatchBody, ReplaceReflectionBody } from './reflections.js';
import { AgentBody, AgentPatchBody, OrgBody, TokenBody, UpstreamCheckBody } from './validate.js';
import { AgentJson, ErrorJson, Kind, OrgJson, ReflectionJson, ScoredReflectionJson, TokenJson, UpstreamCheckJson } from './wire.js';

export const OPENAPI_PATH = '/v0/openapi.json';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

interface QueryParameter {
  name: string;
  schema: z.ZodType;
  description: string;
}

interface Operation {
  method: Method;
  /** Fastify's form, `:param` segments. */
  path: string;
  summary: string;
  /** Open to the agent's own access token (reads of its own agent); otherwise admin only. */
  agentToken?: boolean;
  /** Needs no token at all. */
  open?: boolean;
  query?: QueryParameter[];
  body?: z.ZodType;
  /** The success answer: status (default 200) and JSON schema, or a streamed media type. */
  status?: number;
  response: z.ZodType | { mediaTypes: Record<string, z.ZodType> };
  /** Other success answers, each with its own status and schema. */
  alsoSucceeds?: Array<{ status: number; description: string; response: z.ZodType }>;
  /** Error statuses beyond 400/401 (and 403 for admin routes, 404 for a path with a parameter), which every route may answer. */
  errors?: number[];
}

const ORG = '/v0/orgs/:org';
const AGENT = `${ORG}/agents/:agent`;
const REFLECTIONS = `${AGENT}/reflections`;

const Deleted = z.object({ id: z.string(), deleted: z.literal(true) });
const list = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item) });
const Page = z.object({ data: z.array(ReflectionJson), limit: z.number().int(), offset: z.number().int(), has_more: z.boolean() });
const SearchResult = z.object({
  query: z.string(),
  data: z.array(ScoredReflectionJson),
  limit: z.number().int(),
  offset: z.number().int(),
  bar: z.number().describe('The agent’s bar (`min_score`): a result whose `relevance` reaches it is injected into a request saying the query'),
});

const LIST_QUERY: QueryParameter[] = [
  { name: 'q', schema: z.string(), description: 'Hybrid (vector + keyword) search, best first; each result with its `relevance` beside the agent’s `bar`' },
  { name: 'conversation', schema: z.string(), description: 'Only what was learnt from this conversation (not with `q`)' },
  { name: 'kind', schema: Kind, description: 'Only this kind' },
  {
    name: 'status',
    schema: z.enum(REFLECTION_STATUSES),
    description:
      'Default `current`. Superseded reflections (replaced by a changed fact, `superseded_by` set) are history, never injected: ' +
      'listed only with `superseded` (only them) or `all`. A search (`q`) finds current ones only',
  },
  {
    name: 'scope',
    schema: z.string(),
    description:
      'Only reflections of this project; empty (`scope=`): only those that hold everywhere. With `q`: what a conversation in this project sees (its own and those that hold everywhere)',
  },
  {
    name: 'user',
    schema: z.string(),
    description:
      "Only reflections this end user taught; empty (`user=`): only the agent's own. With `q`: what a conversation with this user sees (theirs and the agent's own)",
  },
  { name: 'limit', schema: z.number().int().min(1).max(200), description: 'Page size (default 20)' },
  { name: 'offset', schema: z.number().int().min(0), description: 'Rows skipped' },
];

export const OPERATIONS: readonly Operation[] = [
  { method: 'get', path: OPENAPI_PATH, summary: 'This document', open: true, response: z.object({ openapi: z.string() }).catchall(z.unknown()) },
  { method: 'post', path: '/v0/orgs', summary: 'Create an organisation', body: OrgBody, status: 201, response: OrgJson, errors: [409] },
  { method: 'get', path: '/v0/orgs', summary: 'List organisations', response: list(OrgJson) },
  { method: 'get', path: ORG, summary: 'One organisation (by id or name)', response: OrgJson },
  { method: 'delete', path: ORG, summary: 'Delete an organisation with its agents and their reflections', response: Deleted },
  {
    method: 'post',
    path: `${ORG}/members`,
    summary:
      'Give a person the organisation on the dashboard: a user with this email becomes a member (200, idempotent); ' +
      'an email without an account is invited (201: a link to choose a password, shown once, valid 7 days; inviting again replaces it)',
    body: MemberBody,
    response: MemberAddedJson,
    alsoSucceeds: [{ status: 201, description: 'Invited: no account had this email', response: MemberInvitedJson }],
  },
  { method: 'get', path: `${ORG}/members`, summary: "The organisation's members, invited ones included", response: list(MemberJson) },
  { method: 'delete', path: `${ORG}/members/:user`, summary: 'Take the organisation from a member', response: MemberRemovedJson },
  {
    method: 'post',
    path: `${ORG}/agents`,
    summary: 'Create an agent; answers with its first access token, shown once',
    body: AgentBody,
    status: 201,
    response: AgentJson.extend({ token: z.string() }),
    errors: [409],
  },
  {
    method: 'post',
    path: '/v0/upstream-check',
    summary: "Check an upstream before saving it (as the dashboard's Test connection): asks its GET /v1/models with the key and headers given; nothing is stored",
    body: UpstreamCheckBody,
    response: UpstreamCheckJson,
  },
  { method: 'get', path: `${ORG}/agents`, summary: "List an organisation's agents", response: list(AgentJson) },
  { method: 'get', path: AGENT, summary: 'One agent', agentToken: true, response: AgentJson },
  { method: 'patch', path: AGENT, summary: 'Change an agent', body: AgentPatchBody, response: AgentJson, errors: [409] },
  { method: 'delete', path: AGENT, summary: 'Delete an agent and its reflections', response: Deleted },
  {
    method: 'post',
    path: `${AGENT}/tokens`,
    summary: 'Create an access token, shown once',
    body: TokenBody,
    status: 201,
    response: z.object({ id: z.string(), name: z.string(), prefix: z.string(), token: z.string(), created_at: z.iso.datetime() }),
  },
  { method: 'get', path: `${AGENT}/tokens`, summary: "List an agent's tokens (never their values)", response: list(TokenJson) },
  {
    method: 'delete',
    path: `${AGENT}/tokens/:tokenId`,
    summary: 'Revoke a token',
    response: z.object({ id: z.string(), revoked: z.literal(true) }),
  },
  {
    method: 'get',
    path: REFLECTIONS,
    summary: "List an agent's reflections, most recently updated first, or search them (`q`)",
    agentToken: true,
    query: LIST_QUERY,
    response: z.union([Page, SearchResult]),
  },
  {
    method: 'post',
    path: REFLECTIONS,
    summary: 'Add a reflection by hand (redacted, checked for restatements and against the limit, embedded, as MCP `remember`)',
    body: NewReflectionBody,
    status: 201,
    response: ReflectionJson,
    errors: [409],
  },
  {
    method: 'delete',
    path: REFLECTIONS,
    summary: 'Delete everything learnt from one conversation',
    query: [{ name: 'conversation', schema: z.string(), description: 'Required: the conversation whose reflections go' }],
    response: z.object({ conversation_id: z.string(), deleted: z.number().int(), ids: z.array(z.string()) }),
  },
  {
    method: 'get',
    path: `${REFLECTIONS}/export`,
    summary: 'Every reflection of the agent (superseded ones too), streamed: JSON lines (default) or one JSON document',
    agentToken: true,
    query: [{ name: 'format', schema: z.enum(['jsonl', 'json']), description: 'Default `jsonl`: one Reflection per line' }],
    response: {
      mediaTypes: {
        'application/x-ndjson': ReflectionJson,
        'application/json': z.object({ agent_id: z.string(), data: z.array(ReflectionJson) }),
      },
    },
  },
  { method: 'get', path: `${REFLECTIONS}/:id`, summary: 'One reflection', agentToken: true, response: ReflectionJson },
  {
    method: 'patch',
    path: `${REFLECTIONS}/:id`,
    summary:
      'Edit some fields of a reflection, or restore a superseded one (`superseded_by: null`: current again, injected and found again): ' +
      'it keeps its id and origin, is re-embedded and tagged `edited-by-hand`, so extraction never supersedes it',
    body: ReflectionPatchBody,
    response: ReflectionJson,
  },
  {
    method: 'put',
    path: `${REFLECTIONS}/:id`,
    summary: 'Replace the content, kind, topic (and tags) of a reflection, keeping its id and origin',
    body: ReplaceReflectionBody,
    response: ReflectionJson,
  },
  { method: 'delete', path: `${REFLECTIONS}/:id`, summary: 'Delete a reflection', response: Deleted },
  {
    method: 'get',
    path: `${AGENT}/index`,
    summary: "The agent's root memory index (markdown)",
    agentToken: true,
    query: [
      { name: 'scope', schema: z.string(), description: 'The index a conversation in this project sees (its reflections and those that hold everywhere)' },
      { name: 'user', schema: z.string(), description: "The index a conversation with this end user sees (theirs and the agent's own)" },
    ],
    response: z.object({ agent_id: z.string(), markdown: z.string() }),
  },
  {
    method: 'get',
    path: `${AGENT}/jobs`,
    summary: "The agent's extraction jobs: queued (with when they run), running, failed (awaiting a retry) and dead",
    agentToken: true,
    response: JobsJson,
  },
  {
    method: 'get',
    path: `${AGENT}/extraction/dead-letters`,
    summary: 'Extraction jobs that failed for good, with the reason',
    agentToken: true,
    response: list(DeadLetterJson),
  },
  {
    method: 'post',
    path: `${AGENT}/extraction/dead-letters/:id/retry`,
    summary: 'Queue a dead-lettered extraction job again',
    response: RetriedJson,
  },
  {
    method: 'get',
    path: `${AGENT}/requests`,
    summary:
      "The agent's recent proxied requests, latest first: timings, status, what reached the model and why (each reflection added with its relevance and why, " +
      'those kept from earlier turns, what was rebuilt) or why nothing was added (the reason, the bar, the near misses); never text',
    agentToken: true,
    query: [
      { name: 'limit', schema: z.number().int().min(1).max(MAX_REQUESTS_LIMIT), description: `Default 50, at most ${MAX_REQUESTS_LIMIT}` },
      { name: 'cursor', schema: z.string(), description: 'The `next_cursor` of the previous page (of the same filter or another); a cursor no page gave is a 400' },
      { name: 'conversation_id', schema: z.string().min(1), description: "Only this conversation's requests" },
      { name: 'outcome', schema: z.enum(OUTCOMES as [string, ...string[]]), description: 'Only requests that ended so' },
      {
        name: 'nothing_added',
        schema: z.enum(['true', 'false']),
        description: '`true`: only requests to which nothing was added (each says why); `false`: only those that got something',
      },
    ],
    response: RequestPageJson,
  },
  {
    method: 'get',
    path: `${AGENT}/requests/:id`,
    summary: 'One proxied request, by the `x-engram-request-id` its answer carried',
    agentToken: true,
    response: RequestJson,
  },
];

/** `/v0/orgs/:org` → `/v0/orgs/{org}` */
export function openApiPath(fastifyPath: string): string {
  return fastifyPath.replace(/:([A-Za-z_]\w*)/g, '{$1}');
}

type JsonSchema = Record<string, unknown>;

/**
 * JSON Schema 2020-12 (OpenAPI 3.1's dialect) of `schema`; schemas named with
 * `.meta({ id })` go to `components` once and are referenced.
 */
function converter(components: Record<string, JsonSchema>) {
  return (schema: z.ZodType, io: 'input' | 'output'): JsonSchema => {
    const { $schema: _dialect, $defs, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonSchema;
    const relink = (value: unknown): JsonSchema =>
      JSON.parse(JSON.stringify(value).replaceAll('"#/$defs/', '"#/components/schemas/')) as JsonSchema;
    for (const [id, definition] of Object.entries(($defs ?? {}) as Record<string, JsonSchema>)) {
      const linked = relink(definition);
      const known = components[id];
      if (known && JSON.stringify(known) !== JSON.stringify(linked)) throw new Error(`OpenAPI: two different schemas are named ${id}`);
      components[id] = linked;
    }
    // A named schema at the top comes back as a reference to itself in `$defs`.
    return relink(rest);
  };
}

const PATH_PARAMETER_TEXT: Record<string, string> = {
  org: "The organisation's id or name",
  agent: "The agent's id or name",
  user: "The user's id or email",
};

const ERROR_TEXT: Record<number, string> = {
  400: 'Invalid body or query (`error.param` names the field)',
  401: 'Missing or wrong token (also for an org or agent the token may not see)',
  403: "An agent token on a route that needs the admin token",
  404: 'No such organisation, agent, member or item',
  409: 'Conflicts with what exists (a name in use, a restated reflection, the reflection limit)',
  413: 'Body over the limit',
};

export function buildOpenApiDocument(): Record<string, unknown> {
  const components: Record<string, JsonSchema> = {};
  const convert = converter(components);
  // A named schema converts to a reference, its definition landing in `components`.
  const errorRef = convert(ErrorJson, 'output');

  const paths: Record<string, Record<string, unknown>> = {};
  for (const operation of OPERATIONS) {
    const path = openApiPath(operation.path);
    const parameters = [
      ...[...operation.path.matchAll(/:(\w+)/g)].map(([, name]) => ({
        name,
        in: 'path',
        required: true,
        schema: { type: 'string' },
        description: PATH_PARAMETER_TEXT[name],
      })),
      ...(operation.query ?? []).map((query) => ({
        name: query.name,
        in: 'query',
        required: false,
        schema: convert(query.schema, 'input'),
        description: query.description,
      })),
    ];
    const success =
      'mediaTypes' in operation.response
        ? Object.fromEntries(Object.entries(operation.response.mediaTypes).map(([type, schema]) => [type, { schema: convert(schema, 'output') }]))
        : { 'application/json': { schema: convert(operation.response as z.ZodType, 'output') } };
    const errorStatuses = operation.open
      ? []
      : [400, 401, ...(operation.agentToken ? [] : [403]), ...(operation.path.includes(':') ? [404] : [])].concat(
          operation.errors ?? [],
          operation.body ? [413] : [],
        );
    paths[path] ??= {};
    paths[path][operation.method] = {
      operationId: operationId(operation),
      summary: operation.summary,
      description: operation.open ? 'No token needed.' : operation.agentToken ? 'Admin token, or the agent’s own access token.' : 'Admin token only.',
      security: operation.open ? [] : [{ bearer: [] }],
      parameters: parameters.length > 0 ? parameters : undefined,
      requestBody: operation.body
        ? { required: true, content: { 'application/json': { schema: convert(operation.body, 'input') } } }
        : undefined,
      responses: {
        [operation.status ?? 200]: { description: 'Success', content: success },
        ...Object.fromEntries(
          (operation.alsoSucceeds ?? []).map(({ status, description, response }) => [
            status,
            { description, content: { 'application/json': { schema: convert(response, 'output') } } },
          ]),
        ),
        ...Object.fromEntries(
          [...new Set(errorStatuses)].sort().map((status) => [status, { description: ERROR_TEXT[status] ?? 'Error', content: { 'application/json': { schema: errorRef } } }]),
        ),
      },
    };
  }

  return JSON.parse(
    JSON.stringify({
      openapi: '3.1.0',
      info: {
        title: 'Engram management API',
        version: ENGRAM_VERSION,
        description:
          'Organisations and their members, agents, access tokens, reflections, the root memory index, extraction jobs and the request log. JSON in snake_case; ' +
          'errors as `{"error":{message,type,code,param}}`. The admin token (ENGRAM_ADMIN_TOKEN, or <data dir>/admin-token) ' +
          'may call everything; an agent’s own access token may read its agent, reflections, index, jobs and request log.',
      },
      servers: [{ url: '/' }],
      security: [{ bearer: [] }],
      paths,
      components: {
        schemas: components,
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'The admin token, or an agent access token (`egm_...`)' } },
      },
    }),
  ) as Record<string, unknown>;
}

/** `getOrg`, `postAgentReflections`, `getAgentReflection`...: stable names for client generators. */
function operationId(operation: Operation): string {
  const words = operation.path
    .split('/')
    .filter((part) => part !== '' && part !== 'v0')
    .map((part) => (part.startsWith(':') ? `by-${part.slice(1)}` : part));
  return [operation.method, ...words]
    .join('-')
    .replace(/-(\w)/g, (_, c: string) => c.toUpperCase())
    .replace(/[^A-Za-z0-9]/g, '');
}

/** The document route: built once, at registration. No auth hook applies to it (see management.ts). */
export const openApiRoute: FastifyPluginAsync = async (app) => {
  const document = buildOpenApiDocument();
  app.get(OPENAPI_PATH, async () => document);
};
