/**
 * Endpoint 5: `/v0/mcp`, one MCP server for any MCP-aware client, protected by OAuth
 * (DESIGN section 10): the client signs the user in on first connection, and no token is
 * written in its configuration. A request without a valid access token gets 401 with
 * `WWW-Authenticate: Bearer resource_metadata=...` (RFC 9728 §5.1), from which the client
 * discovers Engram's authorization server. A valid token is bound to the one agent the
 * user chose on the consent page: the request is then served exactly as the per-agent
 * MCP server serves that agent (`mcpScope`), with the same limits. An agent token
 * (`egm_…`, as on the one base URL `/v1`) is taken too and serves its own agent, for
 * clients configured with a token rather than a sign-in; neither kind reaches another agent.
 */
import type { FastifyPluginAsync } from 'fastify';
import { authenticateToken } from '../control/auth.js';
import { EngramError } from '../errors.js';
import { looksLikeToken } from '../security/tokens.js';
import type { TokenLookup } from '../ports/index.js';
import { allowAnyOrigin } from '../http/oauth/cors.js';
import type { Access, AuthorizationServer } from '../oauth/authorization-server.js';
import { OAUTH_PATHS, RESOURCE_PATH } from '../oauth/metadata.js';
import { OAuthError } from '../oauth/oauth-error.js';
import { mcpScope, type McpMountOptions } from './http-mount.js';

export interface GlobalMcpOptions extends McpMountOptions {
  server: AuthorizationServer;
}

const BEARER = /^Bearer\s+([A-Za-z0-9._~+/-]+=*)\s*$/i;

/**
 * The grant stands in for the agent token in the per-token limits: one client's
 * connection has its own rate, as a token would.
 */
function asTokenLookup(access: Access): TokenLookup {
  const { grant, agent } = access;
  return {
    agent,
    token: { id: grant.id, agentId: agent.id, orgId: agent.orgId, name: 'OAuth connection', prefix: '', createdAt: grant.createdAt, revokedAt: null, lastUsedAt: grant.lastUsedAt },
  };
}

/** `/v0/mcp`: POST served for the token's agent; GET and DELETE 405; CORS open (bearer tokens, no cookies). */
export const globalMcpRoutes: FastifyPluginAsync<GlobalMcpOptions> = async (app, { server, ...options }) => {
  const { deps } = options;
  // The preflight is answered here, outside the scope below whose hooks want a token.
  allowAnyOrigin(app, [RESOURCE_PATH]);

  await app.register(async (scope) => {
    mcpScope(scope, {
      ...options,
      path: RESOURCE_PATH,
      challenge: (_request, given) => `Bearer resource_metadata="${server.issuer}${OAUTH_PATHS.resourceMetadata}"${given ? ', error="invalid_token"' : ''}`,
      agentOf: (request) => ({ orgId: (request.agentToken as TokenLookup).agent.orgId, agentId: (request.agentToken as TokenLookup).agent.id }),
      authenticate: async (request) => {
        const header = request.headers.authorization;
        const match = header === undefined ? null : BEARER.exec(header);
        if (!match) {
          throw new EngramError(
            'unauthorized',
            header === undefined
              ? 'Sign in first: this MCP server takes an OAuth access token (Authorization: Bearer); your MCP client finds how to get one from the WWW-Authenticate header'
              : 'The Authorization header is not a bearer token',
          );
        }
        // Agent tokens have their prefix; OAuth access tokens are JWTs, which never start with it.
        if (looksLikeToken(match[1])) {
          request.agentToken = await authenticateToken(deps.control, request.headers, deps.adminTokenHash);
          return;
        }
        try {
          request.agentToken = asTokenLookup(await server.authenticate(match[1]));
        } catch (error) {
          if (error instanceof OAuthError) throw new EngramError('unauthorized', error.message);
          throw error;
        }
      },
    });
  });
};
