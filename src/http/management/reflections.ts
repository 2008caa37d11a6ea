import { Readable } from 'node:stream';
import { MIN_CONTENT_WORDS, MIN_WORDS } from '../../domain/reflection-content.js';
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { REFLECTION_KINDS, type Reflection, type ReflectionKind } from '../../domain/types.js';
import type { Deps } from '../../deps.js';
import { EngramError } from '../../errors.js';
import { whileAsked } from '../while-asked.js';
import { searchWithRelevance } from '../../memory/search-relevance.js';
import { MAX_CONTENT_CHARS, MAX_TAG_CHARS, MAX_TAGS, MAX_TOPIC_CHARS } from '../../memory/reflection-writer.js';
import type { HandEdit } from '../../memory/hand-edits.js';
import { reflectionRouteDeps } from '../memory-search-deps.js';
import { buildRootIndex, listAllReflections } from '../../memory/root-index.js';
import { agentRead, findAgent, type AgentParams } from './access.js';
import { invalid, parseBody, queryInteger, queryOneOf, queryString } from './validate.js';
import { reflectionWire, searchedReflectionWire } from './wire.js';
import { MAX_SCOPE_LENGTH, validName } from '../../domain/scope.js';

interface ReflectionParams extends AgentParams {
  id: string;
}

interface ReflectionQuery {
  q?: unknown;
  conversation?: unknown;
  kind?: unknown;
  status?: unknown;
  limit?: unknown;
  offset?: unknown;
  format?: unknown;
  scope?: unknown;
  user?: unknown;
}

const MAX_LIMIT = 200;
/** Rows read per page while an export streams: memory stays bounded however many there are. */
const EXPORT_PAGE = 500;


const Kind = z.enum(REFLECTION_KINDS as [ReflectionKind, ...ReflectionKind[]]);
const Content = z
  .string()
  .trim()
  .min(1)
  .max(MAX_CONTENT_CHARS)
  .describe(`One self-contained memory; secrets are redacted. At least ${MIN_WORDS} words, ${MIN_CONTENT_WORDS} of them content words (not "the", "is", "to", ...), or 400`);
const Topic = z.string().trim().max(MAX_TOPIC_CHARS).describe('A short topic it is filed under (default `general`)');
const Tags = z.array(z.string().trim().min(1).max(MAX_TAG_CHARS)).max(MAX_TAGS);

/** `PUT .../reflections/:id`: the whole of what a person may change. */
export const ReplaceReflectionBody = z.strictObject({ content: Content, kind: Kind, topic: Topic, tags: Tags.optional() }).meta({ id: 'ReplaceReflection' });

/**
 * `null` restores a superseded reflection (history a changed fact replaced): a person's
 * edit, so extraction never supersedes it again. Marking one superseded is extraction's
 * work, not a person's: nothing else is accepted.
 */
const Restore = z
  .null()
  .describe(
    '`null` restores a superseded reflection: current again, injected and found again (the reflection that replaced it stays). ' +
      'Marked `edited-by-hand` like any edit, so extraction does not supersede it again',
  );

/** A scope or user name as a person gives it: trimmed, printable, not blank, at most `MAX_SCOPE_LENGTH`. */
const Name = (what: string) => z.string().trim().refine(validName, `A ${what} is a printable name of 1 to ${MAX_SCOPE_LENGTH} characters`);

const ScopeName = Name('scope')
  .nullable()
  .describe('Moves it to this project (a repository name, as `x-engram-scope` gives it); `null`: it holds everywhere');

/**
 * `POST .../reflections`: one reflection added by hand (the MCP `remember` path), in a
 * project and for an end user when given: a restatement is judged on what a conversation
 * of them sees, so the same words in another project or for another user are not one.
 */
export const NewReflectionBody = z
  .strictObject({
    content: Content,
    kind: Kind,
    topic: Topic.optional(),
    tags: Tags.optional(),
    scope: Name('scope')
      .nullable()
      .optional()
      .describe('The project it holds in (a repository name, as `x-engram-scope` gives it); absent or `null`: it holds everywhere'),
    user: Name('user')
      .nullable()
      .optional()
      .describe("The app's end user it is for (as `x-engram-user` gives it): never injected, recalled or listed for another; absent or `null`: the agent's own, shared by all its users"),
  })
  .meta({ id: 'NewReflection' });

/** `PATCH .../reflections/:id`: any of the fields, at least one; `superseded_by: null` restores. */
export const ReflectionPatchBody = z
  .strictObject({
    content: Content.optional(),
    kind: Kind.optional(),
    topic: Topic.optional(),
    tags: Tags.optional(),
    superseded_by: Restore.optional(),
    scope: ScopeName.optional(),
  })
  .refine((body) => Object.values(body).some((value) => value !== undefined), {
    message: 'Nothing to change: give one of content, kind, topic, tags, superseded_by, scope',
  })
  .meta({ id: 'ReflectionPatch' });

type EditBody = z.output<typeof ReplaceReflectionBody> | z.output<typeof ReflectionPatchBody>;

/** What a person's change asks of `HandEdits.edit`. */
function handEdit(body: EditBody): HandEdit {
  const { content, kind, topic, tags } = body;
  const restore = 'superseded_by' in body && body.superseded_by === null;
  const scope = 'scope' in body ? body.scope : undefined;
  return { content, kind, topic, tags, ...(restore ? { restore } : {}), ...(scope !== undefined ? { scope } : {}) };
}

/**
 * `status` of a listing: superseded reflections (replaced by a changed fact) are history,
 * listed only when asked for.
 */
export const REFLECTION_STATUSES = ['current', 'superseded', 'all'] as const;

/**
 * A listing's `scope` or `user` filter: absent, no filter; empty (`?scope=`), only those
 * without one (holding everywhere; the agent's own); a name, exactly that one.
 */
function nameFilter(value: string | undefined, param: string): string | null | undefined {
  if (value === undefined) return undefined;
  const name = value.trim();
  if (name === '') return null;
  if (!validName(name)) throw invalid(param, `\`${param}\` must be a printable name of 1 to ${MAX_SCOPE_LENGTH} characters`);
  return name;
}

/**
 * `/v0/orgs/:org/agents/:agent/reflections` and `/index`. Reads are open to the agent's
 * own token; changes are admin only and rebuild the root memory index.
 */
export const reflectionRoutes: FastifyPluginAsync<{ deps: Deps }> = async (app, { deps }) => {
  const { control, reflections } = deps;
  const { search, retrieval, hand } = reflectionRouteDeps(deps, app.log);

  /** The agent's reflections learnt from one conversation, most recently updated first. */
  const learntIn = async (agentId: string, conversation: string): Promise<Reflection[]> =>
    (await listAllReflections(reflections, agentId))
      .filter((r) => r.origin?.conversation === conversation)
      .sort((a, b) => b.updatedAt - a.updatedAt);

  const findReflection = async (params: ReflectionParams): Promise<Reflection> => {
    const { agent } = await findAgent(control, params);
    const reflection = await reflections.get(agent.id, params.id);
    if (!reflection) throw new EngramError('not_found', `No reflection \`${params.id}\``);
    return reflection;
  };

  app.get<{ Params: AgentParams; Querystring: ReflectionQuery }>(
    '/v0/orgs/:org/agents/:agent/reflections',
    agentRead,
    async (request, reply) => {
      const { agent } = await findAgent(control, request.params);
      const query = request.query;
      const q = queryString(query.q, 'q')?.trim() ?? '';
      // An empty `kind` or `status` is as good as none.
      const kind = queryOneOf(query.kind || undefined, 'kind', REFLECTION_KINDS);
      const limit = queryInteger(query.limit, 'limit', { min: 1, max: MAX_LIMIT, fallback: 20 });
      const offset = queryInteger(query.offset, 'offset', { min: 0, max: 100_000, fallback: 0 });
      const conversation = queryString(query.conversation, 'conversation');
      if (conversation !== undefined && q !== '') throw invalid('conversation', '`conversation` cannot be combined with `q`');
      const status = queryOneOf(query.status || undefined, 'status', REFLECTION_STATUSES) ?? 'current';
      // The store's filter: `all` is none.
      const superseded = status === 'all' ? undefined : status === 'superseded';
      const scope = nameFilter(queryString(query.scope, 'scope'), 'scope');
      const user = nameFilter(queryString(query.user, 'user'), 'user');

      if (q !== '') {
        if (status !== 'current') throw invalid('status', 'A search (`q`) finds current reflections only: leave `status` out');
        // With a scope or user, a search finds what a conversation of them would see.
        const visible = scope === undefined && user === undefined ? undefined : { ...(scope ? { scope } : {}), ...(user ? { user } : {}) };
        // The search stops when the person asking goes (its embedding request is closed).
        const found = await whileAsked(reply, (signal) => searchWithRelevance({ search, retrieval }, agent, { text: q, limit: limit + offset, kind, visible, signal }));
        if (!found) return reply.hijack();
        return { query: q, data: found.results.slice(offset).map(searchedReflectionWire), limit, offset, bar: found.bar };
      }
      if (conversation !== undefined) {
        const learnt = (await learntIn(agent.id, conversation)).filter(
          (r) =>
            (kind === undefined || r.kind === kind) &&
            (superseded === undefined || (r.supersededBy !== undefined) === superseded) &&
            (scope === undefined || (r.scope ?? null) === scope) &&
            (user === undefined || (r.user ?? null) === user),
        );
        return { data: learnt.slice(offset, offset + limit).map(reflectionWire), limit, offset, has_more: learnt.length > offset + limit };
      }
      // One extra row tells whether another page exists without a second count query.
      const page = await reflections.list(agent.id, { limit: limit + 1, offset, kind, superseded, scope, user });
      return { data: page.slice(0, limit).map(reflectionWire), limit, offset, has_more: page.length > limit };
    },
  );

  // The path MCP `remember` takes: redaction, restatement checks, the reflection cap,
  // embedding and the index rebuild are the writer's, so a hand-made memory obeys them too.
  app.post<{ Params: AgentParams }>('/v0/orgs/:org/agents/:agent/reflections', async (request, reply) => {
    const { agent } = await findAgent(control, request.params);
    const body = parseBody(NewReflectionBody, request.body);
    return reply.code(201).send(reflectionWire(await hand.add(agent.id, body)));
  });

  // Every reflection of the agent, read a page at a time and written as it is read, so a
  // large store neither sits in memory nor delays the first byte. Pages are by offset over
  // "most recently updated first": a reflection changed during the export may appear
  // twice or be missed, as with any listing taken while the agent learns.
  app.get<{ Params: AgentParams; Querystring: ReflectionQuery }>(
    '/v0/orgs/:org/agents/:agent/reflections/export',
    agentRead,
    async (request, reply) => {
      const { agent } = await findAgent(control, request.params);
      const format = queryOneOf(request.query.format, 'format', ['jsonl', 'json'] as const) ?? 'jsonl';
      async function* lines(): AsyncGenerator<string> {
        if (format === 'json') yield `{"agent_id":${JSON.stringify(agent.id)},"data":[`;
        let first = true;
        for (let offset = 0; ; offset += EXPORT_PAGE) {
          const page = await reflections.list(agent.id, { limit: EXPORT_PAGE, offset });
          for (const reflection of page) {
            const text = JSON.stringify(reflectionWire(reflection));
            yield format === 'json' ? `${first ? '' : ','}\n${text}` : `${text}\n`;
            first = false;
          }
          if (page.length < EXPORT_PAGE) break;
        }
        if (format === 'json') yield '\n]}\n';
      }
      reply.header('content-type', format === 'json' ? 'application/json; charset=utf-8' : 'application/x-ndjson; charset=utf-8');
      reply.header('content-disposition', `attachment; filename="reflections-${agent.id}.${format}"`);
      return reply.send(Readable.from(lines()));
    },
  );

  // Everything learnt from one conversation (a planted instruction in a fetched page, a
  // transcript that should not have been uploaded) is purged in one call.
  app.delete<{ Params: AgentParams; Querystring: ReflectionQuery }>('/v0/orgs/:org/agents/:agent/reflections', async (request) => {
    const { agent } = await findAgent(control, request.params);
    const conversation = queryString(request.query.conversation, 'conversation');
    if (conversation === undefined || conversation === '') {
      throw invalid('conversation', 'Give `conversation` to delete what was learnt from it (one reflection: DELETE .../reflections/ID)');
    }
    const ids = await hand.removeLearntIn(agent.id, await learntIn(agent.id, conversation));
    return { conversation_id: conversation, deleted: ids.length, ids };
  });

  app.get<{ Params: ReflectionParams }>('/v0/orgs/:org/agents/:agent/reflections/:id', agentRead, async (request) =>
    reflectionWire(await findReflection(request.params)),
  );

  const edit = async (params: ReflectionParams, body: EditBody): Promise<Reflection> => {
    const current = await findReflection(params);
    return hand.edit(current.agentId, current.id, handEdit(body));
  };

  app.patch<{ Params: ReflectionParams }>('/v0/orgs/:org/agents/:agent/reflections/:id', async (request) =>
    reflectionWire(await edit(request.params, parseBody(ReflectionPatchBody, request.body))),
  );

  app.put<{ Params: ReflectionParams }>('/v0/orgs/:org/agents/:agent/reflections/:id', async (request) => {
    const body = parseBody(ReplaceReflectionBody, request.body);
    return reflectionWire(await edit(request.params, { ...body, tags: body.tags ?? [] }));
  });

  app.delete<{ Params: ReflectionParams }>('/v0/orgs/:org/agents/:agent/reflections/:id', async (request) => {
    const current = await findReflection(request.params);
    if (!(await hand.remove(current.agentId, current.id))) throw new EngramError('not_found', `No reflection \`${current.id}\``);
    return { id: current.id, deleted: true };
  });

  app.get<{ Params: AgentParams; Querystring: ReflectionQuery }>('/v0/orgs/:org/agents/:agent/index', agentRead, async (request) => {
    const { agent } = await findAgent(control, request.params);
    // The index is per scope and user (DESIGN section 13): the stored one is what a conversation with neither sees.
    const scope = nameFilter(queryString(request.query.scope, 'scope'), 'scope') ?? undefined;
    const user = nameFilter(queryString(request.query.user, 'user'), 'user') ?? undefined;
    const visible = { ...(scope ? { scope } : {}), ...(user ? { user } : {}) };
    let markdown = scope || user ? undefined : await control.indexes.get(agent.id);
    if (markdown === undefined) {
      // Built here, not stored: nothing stored yet (no write since the agent was created, or an older data dir), or a scope's or user's.
      markdown = buildRootIndex(await listAllReflections(reflections, agent.id, { superseded: false, visible }));
    }
    return { agent_id: agent.id, markdown };
  });
};
