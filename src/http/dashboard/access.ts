/** What a page may show: only the signed-in user's own organisations and agents (404 otherwise, never 403, so ids are not probed). */
import type { FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.js';
import type { User } from '../../domain/account-records.js';
import type { Agent, Org } from '../../domain/types.js';
import { EngramError } from '../../errors.js';
import type { AgentParams, OrgParams } from '../management/access.js';

export type { AgentParams, OrgParams } from '../management/access.js';

export function userOf(request: FastifyRequest): User {
  const user = request.signedIn?.user;
  if (!user) throw new EngramError('unauthorized', 'Log in first.');
  return user;
}

export async function ownOrg(deps: Deps, request: FastifyRequest<{ Params: OrgParams }>): Promise<{ user: User; org: Org }> {
  const user = userOf(request);
  const org = await deps.accounts.orgOf(user, request.params.org);
  if (!org) throw new EngramError('not_found', 'There is no such organisation among yours.');
  return { user, org };
}

export async function ownAgent(deps: Deps, request: FastifyRequest<{ Params: AgentParams }>): Promise<{ user: User; org: Org; agent: Agent }> {
  const { user, org } = await ownOrg(deps, request);
  const agent = await deps.accounts.agentOf(user, org.id, request.params.agent);
  if (!agent) throw new EngramError('not_found', 'There is no such agent in this organisation.');
  return { user, org, agent };
}
