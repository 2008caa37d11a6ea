/**
 * The applications a user let act for their agents (`/account/connections`), with a
 * revoke button each. Revoking kills the grant: its refresh token fails at once, and so
 * do its access tokens, since the MCP server checks the grant on every request.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../../deps.js';
import { EngramError } from '../../errors.js';
import type { AuthorizationServer } from '../../oauth/authorization-server.js';
import { requireSignedIn } from '../web/session.js';

export const CONNECTIONS_PATH = '/account/connections';

/** `GET /account/connections` and `POST /account/connections/:grant/revoke`, for the web scope. */
export function connectionsPages(server: AuthorizationServer): FastifyPluginAsync<{ deps: Deps }> {
  return async (app) => {
    app.addHook('preHandler', requireSignedIn);

    app.get(CONNECTIONS_PATH, async (request, reply) => {
      const user = request.signedIn?.user;
      if (!user) throw new EngramError('unauthorized', 'Log in first.');
      return reply.page('account-connections', { title: 'Connected applications', connections: await server.connections(user) });
    });

    app.post<{ Params: { grant: string } }>(`${CONNECTIONS_PATH}/:grant/revoke`, { preValidation: app.csrfProtection }, async (request, reply) => {
      const user = request.signedIn?.user;
      if (!user) throw new EngramError('unauthorized', 'Log in first.');
      // Another user's grant is as absent as one that never existed.
      if (!(await server.revokeConnection(user, request.params.grant))) throw new EngramError('not_found', 'There is no such connection among yours.');
      return reply.redirect(CONNECTIONS_PATH, 303);
    });
  };
}
