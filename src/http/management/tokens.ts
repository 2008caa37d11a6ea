import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../../deps.js';
import { EngramError } from '../../errors.js';
import { findAgent, type AgentParams } from './access.js';
import { issueToken } from './issue-token.js';
import { parseBody, resourceName, TokenBody } from './validate.js';
import { isoTime, tokenWire } from './wire.js';

interface TokenParams extends AgentParams {
  tokenId: string;
}

/** `/v0/orgs/:org/agents/:agent/tokens`: admin only; clear tokens appear once, on creation. */
export const tokenRoutes: FastifyPluginAsync<{ deps: Deps }> = async (app, { deps }) => {
  const { control } = deps;

  app.post<{ Params: AgentParams }>('/v0/orgs/:org/agents/:agent/tokens', async (request, reply) => {
    const { agent } = await findAgent(control, request.params);
    const name = resourceName(parseBody(TokenBody, request.body), 'name', false) ?? 'default';
    const { token, record } = await issueToken(control, agent, name);
    return reply.code(201).send({ id: record.id, name: record.name, prefix: record.prefix, token, created_at: isoTime(record.createdAt) });
  });

  app.get<{ Params: AgentParams }>('/v0/orgs/:org/agents/:agent/tokens', async (request) => {
    const { agent } = await findAgent(control, request.params);
    return { data: (await control.directory.listTokens(agent.id)).map(tokenWire) };
  });

  app.delete<{ Params: TokenParams }>('/v0/orgs/:org/agents/:agent/tokens/:tokenId', async (request) => {
    const { agent } = await findAgent(control, request.params);
    const { tokenId } = request.params;
    if (!(await control.revokeToken(agent.id, tokenId))) {
      throw new EngramError('not_found', `No live token \`${tokenId}\` for this agent`);
    }
    return { id: tokenId, revoked: true };
  });
};
