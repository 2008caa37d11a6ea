/**
 * Reading back the responses Engram recorded (Responses API): `GET /v1/responses/{id}`,
 * `DELETE /v1/responses/{id}` and `GET /v1/responses/{id}/input_items`, per agent and per
 * owner (the end user and project the request names, `x-engram-user` and `x-engram-scope`):
 * another agent's or another owner's ids are not found, the same 404 as an unknown id. Served from Engram's records whatever the upstream keeps.
 * Registered in the proxy's token scope, whose hook has checked the token (`agentTokenOf`).
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { recordContext } from '../conversation/chains.js';
import type { Deps } from '../deps.js';
import { EngramError } from '../errors.js';
import { isObject } from '../protocols/shared.js';
import { responses } from '../protocols/responses/adapter.js';
import type { JsonObject } from '../protocols/types.js';
import { agentTokenOf } from './before-body.js';
import { headerVisibility } from '../conversation/scope.js';

interface Params {
  org: string;
  agent: string;
  id: string;
}

interface ListQuery {
  after?: string;
  limit?: string;
  order?: string;
}

function notFound(id: string): EngramError {
  return new EngramError('not_found', `Response with id '${id}' not found.`);
}

/** An input item as the API lists it: typed, with an id, content as parts. */
function listedItem(item: unknown, responseId: string, index: number): JsonObject {
  const object: JsonObject = isObject(item) ? { ...item } : { type: 'message', role: 'user', content: String(item) };
  if (object.type === undefined && typeof object.role === 'string') object.type = 'message';
  if (object.type === 'message' && typeof object.content === 'string') {
    object.content = [{ type: object.role === 'assistant' ? 'output_text' : 'input_text', text: object.content }];
  }
  if (typeof object.id !== 'string') {
    const prefix = object.type === 'message' ? 'msg' : 'item';
    object.id = `${prefix}_${createHash('sha256').update(`${responseId}:${index}`).digest('hex').slice(0, 40)}`;
  }
  return object;
}

function listOptions(query: ListQuery): { after?: string; limit: number; order: 'asc' | 'desc' } {
  const limit = query.limit === undefined ? 20 : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    throw new EngramError('invalid_request', '`limit` must be an integer between 1 and 100', { param: 'limit' });
  }
  const order = query.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw new EngramError('invalid_request', "`order` must be 'asc' or 'desc'", { param: 'order' });
  return { after: query.after || undefined, limit, order };
}

export function storedResponseRoutes(app: FastifyInstance, deps: Deps, prefix: string): void {
  const { control } = deps;
  const config = { protocol: responses };
  const path = `${prefix}/v1/responses/:id`;

  app.get<{ Params: Params }>(path, { config }, async (request) => {
    const { agent } = agentTokenOf(request);
    const record = await control.getResponse(agent.id, request.params.id, headerVisibility(request.headers));
    if (!record) throw notFound(request.params.id);
    return record.body;
  });

  app.delete<{ Params: Params }>(path, { config }, async (request) => {
    const { agent } = agentTokenOf(request);
    if (!(await control.deleteResponse(agent.id, request.params.id, headerVisibility(request.headers)))) throw notFound(request.params.id);
    return { id: request.params.id, object: 'response', deleted: true };
  });

  app.get<{ Params: Params; Querystring: ListQuery }>(`${path}/input_items`, { config }, async (request) => {
    const { agent } = agentTokenOf(request);
    const options = listOptions(request.query);
    const owner = headerVisibility(request.headers);
    const record = await control.getResponse(agent.id, request.params.id, owner);
    if (!record) throw notFound(request.params.id);
    const context = await recordContext(control, record, owner);
    if (!context) throw new EngramError('not_found', `A response earlier in the chain of '${record.id}' was deleted.`);
    let items = context.map((item, index) => listedItem(item, record.id, index));
    if (options.order === 'desc') items = items.reverse();
    if (options.after !== undefined) {
      const at = items.findIndex((item) => item.id === options.after);
      if (at === -1) throw new EngramError('invalid_request', `No input item with id '${options.after}' in this response`, { param: 'after' });
      items = items.slice(at + 1);
    }
    const data = items.slice(0, options.limit);
    return {
      object: 'list',
      data,
      first_id: data[0]?.id ?? null,
      last_id: data[data.length - 1]?.id ?? null,
      has_more: items.length > data.length,
    };
  });
}
