/**
 * Dynamic client registration (RFC 7591) for public clients: MCP clients register
 * themselves on first use, with no secret (OAuth 2.1 §2.1: a program on the user's
 * machine cannot keep one; PKCE protects its codes instead). What a client asks for is
 * checked here; anything Engram does not do is refused with RFC 7591 §3.2.2's codes
 * rather than silently registered, so the client learns at once instead of at its first
 * token request. Unknown metadata is ignored (§2).
 */
import type { OAuthClient } from '../domain/account-records.js';
import { OAuthError } from './oauth-error.js';
import { redirectUriProblem } from './redirect-uris.js';

/** What every client may use: the code flow, and refresh tokens to stay signed in. */
export const GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;
export const RESPONSE_TYPES = ['code'] as const;
/** The one scope: acting for the chosen agent's memory through the MCP tools. */
export const SCOPE = 'memory';
/** Registration is open to anyone: a client's record stays small. */
export const MAX_REDIRECT_URIS = 10;
const MAX_NAME_CHARS = 100;

/** What a registration request is allowed to make. */
export interface ClientRequest {
  name: string;
  redirectUris: string[];
}

function metadataError(description: string): OAuthError {
  return new OAuthError('invalid_client_metadata', description);
}

function stringList(value: unknown, field: string): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) throw metadataError(`${field} must be an array of strings`);
  return value;
}

/** A person reads the name on the consent page: control characters and padding go. */
function cleanName(value: unknown, fallback: string): string {
  if (value !== undefined && typeof value !== 'string') throw metadataError('client_name must be a string');
  const cleaned = (value ?? '').replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').replace(/\s+/g, ' ').trim();
  return (cleaned || fallback).slice(0, MAX_NAME_CHARS);
}

/** Checks a registration request's metadata (RFC 7591 §2); throws `invalid_redirect_uri` or `invalid_client_metadata`. */
export function parseClientMetadata(body: unknown): ClientRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw metadataError('The registration request must be a JSON object');
  const metadata = body as Record<string, unknown>;

  const redirectUris = stringList(metadata.redirect_uris, 'redirect_uris');
  if (!redirectUris || redirectUris.length === 0) throw new OAuthError('invalid_redirect_uri', 'redirect_uris is required: at least one redirect URI');
  if (redirectUris.length > MAX_REDIRECT_URIS) throw new OAuthError('invalid_redirect_uri', `At most ${MAX_REDIRECT_URIS} redirect URIs`);
  for (const uri of redirectUris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new OAuthError('invalid_redirect_uri', problem);
  }

  const method = metadata.token_endpoint_auth_method;
  if (method !== undefined && method !== 'none') {
    throw metadataError('Only public clients are supported: token_endpoint_auth_method must be "none" (PKCE protects the code)');
  }
  const grantTypes = stringList(metadata.grant_types, 'grant_types') ?? ['authorization_code'];
  const unsupportedGrant = grantTypes.find((type) => !(GRANT_TYPES as readonly string[]).includes(type));
  if (unsupportedGrant) throw metadataError(`Unsupported grant type "${unsupportedGrant}": only ${GRANT_TYPES.join(' and ')}`);
  if (!grantTypes.includes('authorization_code')) throw metadataError('grant_types must include authorization_code');
  const responseTypes = stringList(metadata.response_types, 'response_types') ?? ['code'];
  if (responseTypes.some((type) => type !== 'code')) throw metadataError('Only the response type "code" is supported');

  return { name: cleanName(metadata.client_name, new URL(redirectUris[0]).hostname), redirectUris: [...new Set(redirectUris)] };
}

/**
 * RFC 7591 §3.2.1's answer: the client's id and the metadata as registered. Every client
 * gets both grant types whatever it listed (the server may replace values, §3.2.1):
 * refresh tokens are how a client stays signed in past the access token's 15 minutes.
 */
export function registrationResponse(client: OAuthClient): Record<string, unknown> {
  return {
    client_id: client.id,
    client_id_issued_at: Math.floor(client.createdAt / 1000),
    client_name: client.name,
    redirect_uris: client.redirectUris,
    token_endpoint_auth_method: 'none',
    grant_types: [...GRANT_TYPES],
    response_types: [...RESPONSE_TYPES],
    scope: SCOPE,
  };
}
