/**
 * `/v0/orgs/:org/agents/:agent/requests` (DESIGN section 12): the agent's recent proxied
 * requests, latest first, paged by an opaque cursor, and one by its id (the
 * `x-engram-request-id` the client got). Open to the agent's own token, like its
 * reflections. An entry shows ids, numbers and the reflections' signals (what was added,
 * kept, rebuilt, or why nothing was), never the request's or the answer's text (the log
 * does not hold any). A listing filters by conversation, outcome and whether anything was
 * added, in the store: a page holds `limit` matching entries.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import type { ConversationStatus } from '../../../machines/conversation.machine.js';
import type { Deps } from '../../deps.js';
import { ANSWER_LIMITS, NOTHING_ADDED_REASONS } from '../../domain/request-log-words.js';
import { EngramError } from '../../errors.js';
import type { AnswerLimit, NothingAdded, RequestEntry, RequestFilter } from '../../ports/index.js';
import { agentRead, findAgent, type AgentParams } from './access.js';
import { invalid, queryInteger, queryOneOf, queryString } from './validate.js';
import { isoTime, Time } from './wire.js';

export const MAX_REQUESTS_LIMIT = 200;
const DEFAULT_LIMIT = 50;

/** How a turn can end (`ConversationStatus`, every one named: the compiler checks), what `?outcome=` takes. */
const OUTCOME_NAMES: Record<ConversationStatus, true> = { settled: true, upstream_error: true, interrupted: true, failed: true, aborted: true };
export const OUTCOMES = Object.keys(OUTCOME_NAMES) as ConversationStatus[];

/** The reasons the log gives (the port's `NothingAdded`), as the words every reader shows them by list them. */
const NOTHING_ADDED = NOTHING_ADDED_REASONS satisfies NothingAdded[] as [NothingAdded, ...NothingAdded[]];

const RelevanceJson = z.number().describe('On the scale of the agent’s `min_score`: relevance at or above its bar is injected');

export const RequestJson = z
  .object({
    id: z.string().describe('The `x-engram-request-id` the client got'),
    at: Time.describe('When the request started (its body read)'),
    protocol: z.enum(['chat-completions', 'messages', 'responses']),
    conversation_id: z.string().nullable().describe('The conversation it belongs to; null when it ended before one was found (a bad body)'),
    status: z.number().int().nullable().describe('The HTTP status the client got; null when none was sent (the client left first)'),
    outcome: z.string().describe(`How the turn ended: ${OUTCOMES.join(', ')}`),
    latency_ms: z.number().describe('From the request (its body read) to the end of its answer'),
    upstream_ms: z.number().nullable().describe('From the upstream request to the end of its answer; null when nothing was sent upstream'),
    scope: z.string().nullable().describe('The project the request was seen in (its working directory’s repository, or `x-engram-scope`); null when it stated none'),
    user: z.string().nullable().describe('The end user it came from (`x-engram-user`); null for the agent’s own traffic'),
    injected: z
      .array(
        z.object({
          reflection_id: z.string(),
          relevance: RelevanceJson,
          why: z.string().describe('The signal that made it relevant: `meaning`, `tags`, or `named term "<term>"`'),
        }),
      )
      .describe('What this request added'),
    kept: z
      .array(z.object({ reflection_id: z.string(), turn: z.number().int().describe('The turn of the conversation (1: its first request) that added it') }))
      .describe('What was re-applied from earlier turns, byte for byte'),
    rebuilt: z
      .object({
        blocks: z.array(z.enum(['reflections', 'index'])).describe('The kept blocks rewritten at their place: the relevant reflections, the root memory index'),
        changes: z.array(
          z.object({
            reflection_id: z.string(),
            change: z
              .enum(['superseded', 'deleted', 'edited', 'out_of_scope'])
              .describe('`superseded` (its replacement takes its place), `deleted`, `edited` (the block shows the new text), `out_of_scope` (it moved to another project or end user)'),
            replaced_by: z.string().nullable().describe('The reflection shown in its place; null when none is'),
          }),
        ),
      })
      .nullable()
      .describe('What changed in the kept blocks this turn (a prompt-cache miss from their place on); null when they were re-applied as they were'),
    reason: z
      .enum(NOTHING_ADDED)
      .nullable()
      .describe(
        'Why nothing was added: `client_chore` (a client’s own bookkeeping request, like a session title), `injection_off` (the agent’s `memory.inject` is false), ' +
          '`no_new_input`, `nothing_to_search`, `no_candidates` (nothing this conversation may see was found), `already_held` (the relevant ones are in the conversation already), ' +
          '`under_bar` (none reached the bar: see `near_misses`), `over_budget` (none fitted `top_k` and the token budget), `not_reached` (the turn ended before memory was asked). ' +
          'Null when something was added, and on entries logged before reasons were',
      ),
    bar: z.number().nullable().describe('The agent’s bar (`min_score`) when retrieval ran; null when it did not'),
    near_misses: z
      .array(z.object({ reflection_id: z.string(), relevance: RelevanceJson }))
      .describe('When nothing reached the bar: the best three candidates under it, best first'),
    answer_limit: z
      .enum(ANSWER_LIMITS satisfies AnswerLimit[] as [AnswerLimit, ...AnswerLimit[]])
      .nullable()
      .describe(
        'The bound on answers the request met: `answer_max_bytes` (the answer was over ENGRAM_ANSWER_MAX_BYTES: the client had all of it, the turn was learnt from its first that many bytes), ' +
          '`stream_max_ms` (it streamed past ENGRAM_STREAM_MAX_MS and was cut, the client told with a `stream_time_limit` error event), ' +
          '`sse_max_event_bytes` (an event was over ENGRAM_SSE_MAX_EVENT_BYTES: relayed, not learnt from). Null when none',
      ),
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

  app.get<{ Params: AgentParams; Querystring: RequestsQuery }>(path, agentRead, async (request) => {
    const { agent } = await findAgent(control, request.params);
    const limit = queryInteger(request.query.limit, 'limit', { min: 1, max: MAX_REQUESTS_LIMIT, fallback: DEFAULT_LIMIT });
    const cursor = queryString(request.query.cursor, 'cursor');
    const page = await control.requests.list(agent.id, { limit, cursor, ...requestFilter(request.query) });
    return { data: page.entries.map(requestWire), next_cursor: page.cursor ?? null } satisfies z.output<typeof RequestPageJson>;
  });

  app.get<{ Params: RequestParams }>(`${path}/:id`, agentRead, async (request) => {
    const { agent } = await findAgent(control, request.params);
    const entry = await control.requests.get(agent.id, request.params.id);
    if (!entry) throw new EngramError('not_found', `No request \`${request.params.id}\` in this agent's log (entries are kept ENGRAM_REQUEST_LOG_DAYS)`);
    return requestWire(entry);
  });
};

interface RequestsQuery {
  limit?: unknown;
  cursor?: unknown;
  conversation_id?: unknown;
  outcome?: unknown;
  nothing_added?: unknown;
}

/** The listing's filter from its query: each given once, a known outcome, `true` or `false`; anything else a 400 naming it. */
export function requestFilter(query: RequestsQuery): RequestFilter {
  const conversationId = queryString(query.conversation_id, 'conversation_id');
  if (conversationId !== undefined && conversationId.trim() === '') throw invalid('conversation_id', '`conversation_id` must not be empty');
  const outcome = queryOneOf(query.outcome, 'outcome', OUTCOMES);
  const nothingAdded = queryString(query.nothing_added, 'nothing_added');
  if (nothingAdded !== undefined && nothingAdded !== 'true' && nothingAdded !== 'false') {
    throw invalid('nothing_added', '`nothing_added` must be `true` (only requests that got nothing) or `false` (only those that got something)');
  }
  return {
    ...(conversationId === undefined ? {} : { conversationId }),
    ...(outcome === undefined ? {} : { outcome }),
    ...(nothingAdded === undefined ? {} : { nothingAdded: nothingAdded === 'true' }),
  };
}

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
    scope: entry.scope,
    user: entry.user,
    injected: entry.injected.map(({ reflectionId, relevance, why }) => ({ reflection_id: reflectionId, relevance, why })),
    kept: entry.kept.map(({ reflectionId, turn }) => ({ reflection_id: reflectionId, turn })),
    rebuilt:
      entry.rebuilt === null
        ? null
        : {
            blocks: entry.rebuilt.blocks,
            changes: entry.rebuilt.changes.map(({ reflectionId, change, replacedBy }) => ({ reflection_id: reflectionId, change, replaced_by: replacedBy ?? null })),
          },
    reason: entry.reason,
    bar: entry.bar,
    near_misses: entry.nearMisses.map(({ reflectionId, relevance }) => ({ reflection_id: reflectionId, relevance })),
    answer_limit: entry.answerLimit,
  };
}
