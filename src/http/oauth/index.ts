/**
 * Engram as the OAuth authorization server of its global MCP server: the machine-facing
 * endpoints (`oauthRoutes`, outside the web scope) and the pages a person sees
 * (`oauthPages`, in the web scope: consent, connected applications).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../../deps.js';
import { AuthorizationServer } from '../../oauth/authorization-server.js';
import { connectionsPages } from './connections-pages.js';
import { consentPages } from './consent-pages.js';

export { oauthRoutes } from './api-routes.js';

/** The authorization server over the app's stores, issuing as Engram's public URL. */
export function createAuthorizationServer(deps: Deps): AuthorizationServer {
  return new AuthorizationServer({
    store: deps.accounts.store,
    accounts: deps.accounts,
    vault: deps.vault,
    issuer: () => deps.publicUrl(),
    now: () => deps.now(),
    maxClients: deps.config.oauthMaxClients,
  });
}

/** The OAuth pages of the web scope, over the app's one authorization server. */
export function oauthPages(server: AuthorizationServer): FastifyPluginAsync<{ deps: Deps }> {
  return async (app, { deps }) => {
    await app.register(consentPages(server), { deps });
    await app.register(connectionsPages(server), { deps });
  };
}
