/**
 * Where an MCP client learns how to sign in: the protected resource's metadata (RFC 9728),
 * which names Engram as its authorization server, and the authorization server's own
 * (RFC 8414). Both derive from the issuer, Engram's public URL, so one Engram behind any
 * address describes itself correctly.
 */
import { GRANT_TYPES, RESPONSE_TYPES, SCOPE } from './registration.js';

/** The protected resource: the global MCP server. */
export const RESOURCE_PATH = '/v0/mcp';

export const OAUTH_PATHS = {
  authorize: '/oauth/authorize',
  token: '/oauth/token',
  register: '/oauth/register',
  revoke: '/oauth/revoke',
  /** RFC 9728 §3.1: the well-known prefix, then the resource's path. */
  resourceMetadata: `/.well-known/oauth-protected-resource${RESOURCE_PATH}`,
  /** The same document at the root, for clients that look there first. */
  resourceMetadataRoot: '/.well-known/oauth-protected-resource',
  serverMetadata: '/.well-known/oauth-authorization-server',
} as const;

export function resourceOf(issuer: string): string {
  return issuer + RESOURCE_PATH;
}

/** RFC 9728 §2. */
export function protectedResourceMetadata(issuer: string): Record<string, unknown> {
  return {
    resource: resourceOf(issuer),
    authorization_servers: [issuer],
    bearer_methods_supported: ['header'],
    scopes_supported: [SCOPE],
    resource_name: 'Engram memory',
  };
}

/** RFC 8414 §2. */
export function authorizationServerMetadata(issuer: string): Record<string, unknown> {
  return {
    issuer,
    authorization_endpoint: issuer + OAUTH_PATHS.authorize,
    token_endpoint: issuer + OAUTH_PATHS.token,
    registration_endpoint: issuer + OAUTH_PATHS.register,
    revocation_endpoint: issuer + OAUTH_PATHS.revoke,
    scopes_supported: [SCOPE],
    response_types_supported: [...RESPONSE_TYPES],
    response_modes_supported: ['query'],
    grant_types_supported: [...GRANT_TYPES],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    authorization_response_iss_parameter_supported: true,
  };
}
