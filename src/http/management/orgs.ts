import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../../deps.js';
import { EngramError } from '../../errors.js';
import { findOrg, type OrgParams } from './access.js';
import { OrgBody, parseBody, resourceName } from './validate.js';
import { orgWire } from './wire.js';

/** `/v0/orgs`: admin only. */
export const orgRoutes: FastifyPluginAsync<{ deps: Deps }> = async (app, { deps }) => {
  const { control } = deps;

  app.post('/v0/orgs', async (request, reply) => {
    const name = resourceName(parseBody(OrgBody, request.body), 'name', true);
    // getOrg also matches ids, so a name can never shadow another org's id either.
    if (await control.directory.getOrg(name)) {
      throw new EngramError('conflict', `An organisation named \`${name}\` already exists`, { param: 'name' });
    }
    const org = await control.createOrg(name);
    return reply.code(201).send(orgWire(org));
  });

  app.get('/v0/orgs', async () => ({ data: (await control.directory.listOrgs()).map(orgWire) }));

  app.get<{ Params: OrgParams }>('/v0/orgs/:org', async (request) => orgWire(await findOrg(control, request.params.org)));

  app.delete<{ Params: OrgParams }>('/v0/orgs/:org', async (request) => {
    const org = await findOrg(control, request.params.org);
    // Reflections first: if this fails half-way the org still exists and the call can be
    // repeated, instead of leaving reflections no API can reach any more.
    for (const agent of await control.directory.listAgents(org.id)) await deps.reflections.deleteAgent(agent.id);
    await control.deleteOrg(org.id);
    return { id: org.id, deleted: true };
  });
};
