import type { FastifyPluginAsync } from 'fastify';
import type { z } from 'zod';
import type { Agent } from '../../domain/types.js';
import type { Deps } from '../../deps.js';
import { EngramError } from '../../errors.js';
import { upstreamPolicies } from '../../security/address-policy.js';
import { agentRead, findAgent, findOrg, type AgentParams, type OrgParams } from './access.js';
import { parseAgentPatch, refuseForbiddenUpstream } from './agent-input.js';
import { createAgentFromBody, refuseTakenName } from './create-agent.js';
import { issueToken } from './issue-token.js';
import { checkUpstreamBody } from '../upstream-check.js';
import { parseBody, UpstreamCheckBody } from './validate.js';
import { agentWire, publicBase, type UpstreamCheckJson } from './wire.js';

/** `/v0/orgs/:org/agents[/:agent]`: admin, except that an agent may read its own record. */
export const agentRoutes: FastifyPluginAsync<{ deps: Deps }> = async (app, { deps }) => {
  const { control } = deps;
  // The admin token's: agents made or re-pointed here are the operator's (`UpstreamSettings.setBy`).
  const policies = upstreamPolicies(deps.config);

  const apiKeySet = async (agent: Agent): Promise<boolean> =>
    ((await control.agentSecrets(agent.id))?.upstreamApiKey ?? '') !== '';

  // What the dashboard's "Test connection" does, for the admin token: `engram agent create`
  // asks first, so a wrong URL or key is said before anything is created. Always a 200:
  // the check ran, and `ok` says how it went.
  app.post('/v0/upstream-check', async (request): Promise<z.output<typeof UpstreamCheckJson>> => {
    const body = parseBody(UpstreamCheckBody, request.body);
    return checkUpstreamBody(deps.upstream, body.upstream, 'operator');
  });

  app.post<{ Params: OrgParams }>('/v0/orgs/:org/agents', async (request, reply) => {
    const org = await findOrg(control, request.params.org);
    const { agent, input } = await createAgentFromBody(control, { orgId: org.id, body: request.body, setBy: 'operator', policies });
    let issued;
    try {
      issued = await issueToken(control, agent, 'default');
    } catch (error) {
      // An agent nobody can reach would only be clutter: undo it.
      await control.deleteAgent(org.id, agent.id).catch(() => undefined);
      throw error;
    }
    const wire = agentWire(agent, { base: publicBase(request), apiKeySet: input.secrets.upstreamApiKey !== '' });
    return reply.code(201).send({ ...wire, token: issued.token });
  });

  app.get<{ Params: OrgParams }>('/v0/orgs/:org/agents', async (request) => {
    const org = await findOrg(control, request.params.org);
    const base = publicBase(request);
    const agents = await control.directory.listAgents(org.id);
    return { data: await Promise.all(agents.map(async (agent) => agentWire(agent, { base, apiKeySet: await apiKeySet(agent) }))) };
  });

  app.get<{ Params: AgentParams }>('/v0/orgs/:org/agents/:agent', agentRead, async (request) => {
    const { agent } = await findAgent(control, request.params);
    return agentWire(agent, { base: publicBase(request), apiKeySet: await apiKeySet(agent) });
  });

  app.patch<{ Params: AgentParams }>('/v0/orgs/:org/agents/:agent', async (request) => {
    const { org, agent } = await findAgent(control, request.params);
    const patch = parseAgentPatch(request.body);
    if (patch.upstream?.baseUrl !== undefined) {
      refuseForbiddenUpstream(patch.upstream.baseUrl, policies.operator);
      patch.upstream.setBy = 'operator';
    }
    if (patch.name !== undefined && patch.name !== agent.name) await refuseTakenName(control, org.id, patch.name, agent.id);
    const updated = await control.updateAgent(org.id, agent.id, patch);
    if (!updated) throw new EngramError('not_found', `No agent \`${request.params.agent}\``);
    return agentWire(updated, { base: publicBase(request), apiKeySet: await apiKeySet(updated) });
  });

  app.delete<{ Params: AgentParams }>('/v0/orgs/:org/agents/:agent', async (request) => {
    const { org, agent } = await findAgent(control, request.params);
    // Reflections first, so a failure leaves an agent through which the call can be repeated.
    await deps.reflections.deleteAgent(agent.id);
    await control.deleteAgent(org.id, agent.id);
    return { id: agent.id, deleted: true };
  });
};
