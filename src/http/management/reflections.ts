import type { FastifyBaseLogger, FastifyPluginAsync } from 'fastify';
import type { Reflection, ReflectionKind } from '../../domain/types.js';
import type { Deps } from '../../deps.js';
import { EngramError } from '../../errors.js';
import type { ReflectionPatch } from '../../ports/index.js';
import { searchMemory } from '../../memory/memory-search.js';
import { memorySearchDeps } from '../memory-search-deps.js';
import { buildRootIndex, listAllReflections, rebuildRootIndex } from '../../memory/root-index.js';
import { agentRead, findAgent, type AgentParams } from './access.js';
import {
  bodyObject,
  hasAny,
  invalid,
  onlyKeys,
  optionalString,
  queryInteger,
  queryString,
  type Json,
} from './validate.js';
import { reflectionWire, scoredReflectionWire } from './wire.js';

interface ReflectionParams extends AgentParams {
  id: string;
}

interface ReflectionQuery {
  q?: unknown;
  conversation?: unknown;
  kind?: unknown;
  limit?: unknown;
  offset?: unknown;
}

const KINDS: readonly ReflectionKind[] = ['factual', 'procedural'];
const PATCH_FIELDS = ['content', 'kind', 'topic', 'tags'] as const;
const MAX_LIMIT = 200;

function kindOf(value: unknown, param: string): ReflectionKind | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value === 'string' && (KINDS as readonly string[]).includes(value)) return value as ReflectionKind;
  throw invalid(param, `\`${param}\` must be one of: ${KINDS.join(', ')}`);
}

function tagsOf(body: Json): string[] | undefined {
  const tags = body.tags;
  if (tags === undefined) return undefined;
  if (!Array.isArray(tags) || tags.some((tag) => typeof tag !== 'string' || tag.trim() === '' || tag.length > 100)) {
    throw invalid('tags', '`tags` must be an array of non-empty strings');
  }
  return [...new Set(tags.map((tag: string) => tag.trim()))];
}

function parsePatch(rawBody: unknown): Omit<ReflectionPatch, 'vector' | 'embedderId'> {
  const body = bodyObject(rawBody);
  onlyKeys(body, PATCH_FIELDS);
  if (!hasAny(body, PATCH_FIELDS)) throw invalid(null, `Nothing to change: give one of ${PATCH_FIELDS.join(', ')}`);
  const patch: Omit<ReflectionPatch, 'vector' | 'embedderId'> = {};
  const content = optionalString(body, 'content', '', { max: 4000 });
  if (content !== undefined) patch.content = content.trim();
  const kind = kindOf(body.kind, 'kind');
  if (kind !== undefined) patch.kind = kind;
  const topic = optionalString(body, 'topic', '', { max: 200 });
  if (topic !== undefined) patch.topic = topic.trim();
  const tags = tagsOf(body);
  if (tags !== undefined) patch.tags = tags;
  return patch;
}

/**
 * `/v0/orgs/:org/agents/:agent/reflections` and `/index`. Reads are open to the agent's
 * own token; changes are admin only and rebuild the root memory index.
 */
export const reflectionRoutes: FastifyPluginAsync<{ deps: Deps }> = async (app, { deps }) => {
  const { control, reflections, embedder } = deps;
  const search = memorySearchDeps(deps, app.log);

  // The change is already stored; a failed rebuild only delays the index until the next
  // write, so it is logged rather than turned into an error for a change that succeeded.
  const rebuildIndex = async (agentId: string, log: FastifyBaseLogger): Promise<void> => {
    try {
      await rebuildRootIndex(agentId, { reflections, control });
    } catch (error) {
      log.warn({ err: error, agentId }, 'root index rebuild failed');
    }
  };

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
    async (request) => {
      const { agent } = await findAgent(control, request.params);
      const query = request.query;
      const q = queryString(query.q, 'q')?.trim() ?? '';
      const kind = kindOf(queryString(query.kind, 'kind'), 'kind');
      const limit = queryInteger(query.limit, 'limit', { min: 1, max: MAX_LIMIT, fallback: 20 });
      const offset = queryInteger(query.offset, 'offset', { min: 0, max: 100_000, fallback: 0 });
      const conversation = queryString(query.conversation, 'conversation');
      if (conversation !== undefined && q !== '') throw invalid('conversation', '`conversation` cannot be combined with `q`');

      if (q !== '') {
        const found = await searchMemory(search, agent.id, { text: q, keywords: q, limit: limit + offset, kind, alpha: 0.5 });
        return { query: q, data: found.slice(offset).map(scoredReflectionWire), limit, offset };
      }
      if (conversation !== undefined) {
        const learnt = (await learntIn(agent.id, conversation)).filter((r) => kind === undefined || r.kind === kind);
        return { data: learnt.slice(offset, offset + limit).map(reflectionWire), limit, offset, has_more: learnt.length > offset + limit };
      }
      // One extra row tells whether another page exists without a second count query.
      const page = await reflections.list(agent.id, { limit: limit + 1, offset, kind });
      return { data: page.slice(0, limit).map(reflectionWire), limit, offset, has_more: page.length > limit };
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
    const ids: string[] = [];
    for (const reflection of await learntIn(agent.id, conversation)) {
      if (await reflections.delete(agent.id, reflection.id)) ids.push(reflection.id);
    }
    if (ids.length > 0) await rebuildIndex(agent.id, request.log);
    return { conversation_id: conversation, deleted: ids.length, ids };
  });

  app.get<{ Params: ReflectionParams }>('/v0/orgs/:org/agents/:agent/reflections/:id', agentRead, async (request) =>
    reflectionWire(await findReflection(request.params)),
  );

  app.patch<{ Params: ReflectionParams }>('/v0/orgs/:org/agents/:agent/reflections/:id', async (request) => {
    const current = await findReflection(request.params);
    const patch: ReflectionPatch = parsePatch(request.body);
    if (patch.content !== undefined) {
      if (patch.content === '') throw invalid('content', '`content` must not be empty');
      if (patch.content !== current.content) {
        const [vector] = await embedder.embed([patch.content]);
        patch.vector = vector;
        patch.embedderId = embedder.id;
      }
    }
    const updated = await reflections.update(current.agentId, current.id, patch);
    if (!updated) throw new EngramError('not_found', `No reflection \`${current.id}\``);
    await rebuildIndex(current.agentId, request.log);
    return reflectionWire(updated);
  });

  app.delete<{ Params: ReflectionParams }>('/v0/orgs/:org/agents/:agent/reflections/:id', async (request) => {
    const current = await findReflection(request.params);
    if (!(await reflections.delete(current.agentId, current.id))) {
      throw new EngramError('not_found', `No reflection \`${current.id}\``);
    }
    await rebuildIndex(current.agentId, request.log);
    return { id: current.id, deleted: true };
  });

  app.get<{ Params: AgentParams }>('/v0/orgs/:org/agents/:agent/index', agentRead, async (request) => {
    const { agent } = await findAgent(control, request.params);
    let markdown = await control.indexes.get(agent.id);
    if (markdown === undefined) {
      // Nothing stored yet (no write since the agent was created, or an older data dir).
      markdown = buildRootIndex(await listAllReflections(reflections, agent.id));
    }
    return { agent_id: agent.id, markdown };
  });
};
