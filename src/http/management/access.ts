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
import { AUTH_HINTS, authenticateAgent, isAdmin, presentedToken } from '../../control/auth.js';

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

const ADMIN_TOKEN_SOURCE = 'the admin token (ENGRAM_ADMIN_TOKEN, or the file <data dir>/admin-token; the CLI reads it there)';

/** Hints of `authenticateAgent` that hold on the management API too: they name what the caller's own credential is. */
const KEPT_HINTS = new Set<string>([AUTH_HINTS.openAiKey, AUTH_HINTS.anthropicKey, AUTH_HINTS.revoked]);

/**
 * The 401 of the management API says which token the route takes: the admin token, or on
 * the reads open to an agent (`agentRead`) that agent's own token too. The sentence
 * depends only on the route and on what the caller sent, never on whether the org or
 * agent exists or whose the token is, so it stays no oracle.
 */
function unauthorized(request: FastifyRequest, agentReadable: boolean, cause?: unknown): EngramError {
  const needed = agentReadable
    ? `This needs ${ADMIN_TOKEN_SOURCE} or this agent's own access token (egm_…)`
    : `This needs ${ADMIN_TOKEN_SOURCE}; an agent token does not open it`;
  const how = 'send it as Authorization: Bearer <token> or X-Engram-Api-Key: <token>';
  if (presentedToken(request.headers) === undefined) return new EngramError('unauthorized', `No token in the request. ${needed}: ${how}`);
  const hint = cause instanceof EngramError && KEPT_HINTS.has(cause.message) ? ` (${cause.message})` : '';
  return new EngramError('unauthorized', `The token sent is not accepted here${hint}. ${needed}.`);
}

/** The `onRequest` hook of the management plugin: runs before the body is read. */
export function authorize(deps: Deps): (request: FastifyRequest) => Promise<void> {
  return async (request) => {
    if (isAdmin(deps.adminTokenHash, request.headers)) return;

    const reading = request.method === 'GET' || request.method === 'HEAD';
    const agentReadable = reading && request.routeOptions.config.engramAgentRead === true;
    const params = request.params as Partial<AgentParams>;
    if (params.org === undefined || params.agent === undefined) throw unauthorized(request, agentReadable);
    const org = await deps.control.directory.getOrg(params.org);
    const agent = org && (await deps.control.directory.getAgent(org.id, params.agent));
    if (!org || !agent) throw unauthorized(request, agentReadable);
    try {
      await authenticateAgent(deps.control, request.headers, org.id, agent.id);
    } catch (error) {
      if (error instanceof EngramError && error.code === 'unauthorized') throw unauthorized(request, agentReadable, error);
      throw error;
    }

    if (!agentReadable) {
      throw new EngramError('forbidden', 'An agent token may only read its own agent, reflections and index; use the admin token');
    }
  };
}
