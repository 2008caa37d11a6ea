/**
 * A new agent from the management API's body (the dashboard turns its form into one):
 * parsed by the documented schema, its upstream checked against the address policy of
 * whoever sets it (the operator's for the admin token, the dashboard users' for a form),
 * its name free in the organisation, then created. One path, so both refuse the same
 * things with the same messages.
 */
import type { Control } from '../../control/control.js';
import type { NewAgent } from '../../domain/directory-records.js';
import type { Agent, UpstreamOwner } from '../../domain/types.js';
import type { AddressPolicy } from '../../security/address-policy.js';
import { EngramError } from '../../errors.js';
import { parseNewAgent, refuseForbiddenUpstream } from './agent-input.js';

/** Rejects with `conflict` when another agent of the org has the name. */
export async function refuseTakenName(control: Control, orgId: string, name: string, except?: string): Promise<void> {
  const existing = await control.directory.getAgent(orgId, name);
  if (existing && existing.id !== except) {
    throw new EngramError('conflict', `An agent named \`${name}\` already exists in this organisation`, { param: 'name' });
  }
}

export async function createAgentFromBody(
  control: Control,
  options: { orgId: string; body: unknown; setBy: UpstreamOwner; policies: Record<UpstreamOwner, AddressPolicy> },
): Promise<{ agent: Agent; input: NewAgent }> {
  const parsed = parseNewAgent(options.body, options.orgId);
  const input: NewAgent = { ...parsed, upstream: { ...parsed.upstream, setBy: options.setBy } };
  refuseForbiddenUpstream(input.upstream.baseUrl, options.policies[options.setBy]);
  await refuseTakenName(control, options.orgId, input.name);
  return { agent: await control.createAgent(input), input };
}
