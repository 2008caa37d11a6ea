/**
 * Who may call which management route. The admin token may do everything. An agent's
 * own access token may only read: its agent record, its reflections and its index
 * (routes marked `agentRead`). Anything else with its own agent is 403; any route
 * outside its own agent is 401, the same answer as a wrong token, so a token never
 * reveals whether other orgs or agents exist.
 */
import type { FastifyRequest } from 'fastify';
import type { Agent, Org } from '../../domain/types.js';
import type { Deps } from '../../deps.js';
import { EngramError } from '../../errors.js';
import type { Control } from '../../control/control.js';
import { authenticateAgent, isAdmin } from '../../control/auth.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set by management routes that an agent's own token may call (GET only). */
    engramAgentRead?: boolean;
  }
}

/** Route options of the read-only routes open to an agent's own token. */
export const agentRead = { config: { engramAgentRead: true } } as const;

export interface OrgParams {
  org: string;
}

export interface AgentParams extends OrgParams {
  agent: string;
}

export async function findOrg(control: Control, idOrName: string): Promise<Org> {
  const org = await control.directory.getOrg(idOrName);
  if (!org) throw new EngramError('not_found', `No organisation \`${idOrName}\``);
  return org;
}

export async function findAgent(control: Control, params: AgentParams): Promise<{ org: Org; agent: Agent }> {
  const org = await findOrg(control, params.org);
  const agent = await control.directory.getAgent(org.id, params.agent);
  if (!agent) throw new EngramError('not_found', `No agent \`${params.agent}\` in organisation \`${org.name}\``);
  return { org, agent };
}

/** The `onRequest` hook of the management plugin: runs before the body is read. */
export function authorize(deps: Deps): (request: FastifyRequest) => Promise<void> {
  return async (request) => {
    if (isAdmin(deps.adminTokenHash, request.headers)) return;

    const params = request.params as Partial<AgentParams>;
    if (params.org === undefined || params.agent === undefined) throw new EngramError('unauthorized');
    const org = await deps.control.directory.getOrg(params.org);
    const agent = org && (await deps.control.directory.getAgent(org.id, params.agent));
    if (!org || !agent) throw new EngramError('unauthorized');
    await authenticateAgent(deps.control, request.headers, org.id, agent.id);

    const reading = request.method === 'GET' || request.method === 'HEAD';
    if (!reading || request.routeOptions.config.engramAgentRead !== true) {
      throw new EngramError('forbidden', 'An agent token may only read its own agent, reflections and index; use the admin token');
    }
  };
}
