/**
 * `/v0/orgs/:org/agents/:agent/requests` (DESIGN section 12): the agent's recent proxied
 * requests, latest first, paged by an opaque cursor, and one by its id (the
 * `x-engram-request-id` the client got). Open to the agent's own token, like its
 * reflections. An entry shows ids, numbers and the injected reflections' signals, never
 * the request's or the answer's text (the log does not hold any).
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { EngramError } from '../../errors.js';
import type { RequestEntry } from '../../ports/index.js';
import { agentRead, findAgent, type AgentParams } from './access.js';
import { queryInteger, queryString } from './validate.js';
import { isoTime, Time } from './wire.js';

export const MAX_REQUESTS_LIMIT = 200;
const DEFAULT_LIMIT = 50;

export const RequestJson = z
  .object({
    id: z.string().describe('The `x-engram-request-id` the client got'),
    at: Time.describe('When the request started (its body read)'),
    protocol: z.enum(['chat-completions', 'messages', 'responses']),
    conversation_id: z.string().nullable().describe('The conversation it belongs to; null when it ended before one was found (a bad body)'),
    status: z.number().int().nullable().describe('The HTTP status the client got; null when none was sent (the client left first)'),
    outcome: z.string().describe('How the turn ended: settled, upstream_error, interrupted, failed, aborted'),
    latency_ms: z.number().describe('From the request (its body read) to the end of its answer'),
    upstream_ms: z.number().nullable().describe('From the upstream request to the end of its answer; null when nothing was sent upstream'),
    injected: z.array(
      z.object({
        reflection_id: z.string(),
        score: z.number().describe('Relevance on the scale of the agent’s `min_score`'),
        why: z.string().describe('The signal that made it relevant: `meaning`, `tags`, or `named term "<term>"`'),
      }),
    ),
    scope: z.string().nullable().describe('The project the request was seen in (its working directory’s repository, or `x-engram-scope`); null when it stated none'),
    user: z.string().nullable().describe('The end user it came from (`x-engram-user`); null for the agent’s own traffic'),
    skipped: z
      .enum(['client_chore', 'injection_off'])
      .nullable()
      .describe('Why memory was left out on purpose: `client_chore` (a client’s own bookkeeping request, like Claude Code’s session title: nothing injected, nothing learnt), `injection_off` (the agent’s `memory.inject` is false); null otherwise'),
  })
  .meta({ id: 'Request' });

export const RequestPageJson = z.object({
  data: z.array(RequestJson),
  next_cursor: z.string().nullable().describe('Give it as `cursor` for the next, older page; null on the last page'),
});

interface RequestParams extends AgentParams {
  id: string;
}

export const requestRoutes: FastifyPluginAsync<{ deps: Deps }> = async (app, { deps }) => {
  const { control } = deps;
  const path = '/v0/orgs/:org/agents/:agent/requests';

  app.get<{ Params: AgentParams; Querystring: { limit?: unknown; cursor?: unknown } }>(path, agentRead, async (request) => {
    const { agent } = await findAgent(control, request.params);
    const limit = queryInteger(request.query.limit, 'limit', { min: 1, max: MAX_REQUESTS_LIMIT, fallback: DEFAULT_LIMIT });
    const cursor = queryString(request.query.cursor, 'cursor');
    const page = await control.requests.list(agent.id, { limit, cursor });
    return { data: page.entries.map(requestWire), next_cursor: page.cursor ?? null } satisfies z.output<typeof RequestPageJson>;
  });

  app.get<{ Params: RequestParams }>(`${path}/:id`, agentRead, async (request) => {
    const { agent } = await findAgent(control, request.params);
    const entry = await control.requests.get(agent.id, request.params.id);
    if (!entry) throw new EngramError('not_found', `No request \`${request.params.id}\` in this agent's log (entries are kept ENGRAM_REQUEST_LOG_DAYS)`);
    return requestWire(entry);
  });
};

export function requestWire(entry: RequestEntry): z.output<typeof RequestJson> {
  return {
    id: entry.id,
    at: isoTime(entry.at),
    protocol: entry.protocol as z.output<typeof RequestJson>['protocol'],
    conversation_id: entry.conversationId,
    status: entry.status,
    outcome: entry.outcome,
    latency_ms: entry.latencyMs,
    upstream_ms: entry.upstreamMs,
    injected: entry.injected.map(({ reflectionId, relevance, why }) => ({ reflection_id: reflectionId, score: relevance, why })),
    scope: entry.scope,
    user: entry.user,
    skipped: entry.reason === 'client_chore' || entry.reason === 'injection_off' ? entry.reason : null,
  };
}
