/**
 * The authorization request (RFC 6749 §4.1.1 as OAuth 2.1 narrows it): checked when the
 * consent page is shown and again when it is answered, since the form's hidden fields
 * come back from the browser and are trusted no more than the first query was. Until the
 * client and its redirect URI are known good, an error is shown to the person (a redirect
 * would make Engram an open redirector, §4.1.2.1); after that, errors go back to the
 * client with `state` and `iss` (RFC 9207).
 */
import type { OAuthClient } from '../domain/account-records.js';
import { OAuthError, type OAuthErrorCode } from './oauth-error.js';
import { optional, required, type Params } from './params.js';
import { isRegisteredRedirect, withParams } from './redirect-uris.js';
import { SCOPE } from './registration.js';
import { S256_CHALLENGE } from './secrets.js';

/** A checked authorization request. */
export interface AuthorizeRequest {
  client: OAuthClient;
  /** As presented (a loopback one may differ from the registered one in its port); the code is bound to it. */
  redirectUri: string;
  codeChallenge: string;
  resource: string;
  scope: string;
  state: string | undefined;
}

export interface AuthorizeContext {
  getClient(id: string): Promise<OAuthClient | undefined>;
  /** The one resource tokens are issued for (`<issuer>/v0/mcp`). */
  resource: string;
  issuer: string;
}

/** The client's redirect URI carrying an authorization response (success or error), with `iss` (RFC 9207). */
export function responseLocation(redirectUri: string, issuer: string, state: string | undefined, params: Record<string, string>): string {
  return withParams(redirectUri, { ...params, state, iss: issuer });
}

/** The checked request; throws `OAuthError`, with a `location` once the error is the client's to receive. */
export async function parseAuthorizeRequest(params: Params, context: AuthorizeContext): Promise<AuthorizeRequest> {
  const clientId = required(params, 'client_id');
  const client = await context.getClient(clientId);
  if (!client) throw new OAuthError('invalid_request', 'This application is not registered with Engram (unknown client_id). Start the sign-in again from the application.');
  const redirectUri = required(params, 'redirect_uri');
  if (!isRegisteredRedirect(client.redirectUris, redirectUri)) {
    throw new OAuthError('invalid_request', 'The application asked to return to an address it did not register (redirect_uri). Nothing was sent to it.');
  }

  // From here on, errors are the client's to handle: they go back to its redirect URI.
  let state: string | undefined;
  const fail = (code: OAuthErrorCode, description: string) =>
    new OAuthError(code, description, { location: responseLocation(redirectUri, context.issuer, state, { error: code, error_description: description }) });
  const read = (name: string): string | undefined => {
    try {
      return optional(params, name);
    } catch (error) {
      throw fail('invalid_request', (error as Error).message);
    }
  };
  // A `state` that does not read is answered without one.
  state = read('state');

  if (read('response_type') !== 'code') throw fail('unsupported_response_type', 'Only response_type=code is supported');
  const method = read('code_challenge_method');
  const codeChallenge = read('code_challenge');
  if (!codeChallenge) throw fail('invalid_request', 'PKCE is required: send code_challenge and code_challenge_method=S256');
  if (method !== 'S256') throw fail('invalid_request', 'Only code_challenge_method=S256 is supported');
  if (!S256_CHALLENGE.test(codeChallenge)) throw fail('invalid_request', 'code_challenge must be the base64url SHA-256 of the code verifier (43 characters)');
  const resource = read('resource');
  if (!resource) throw fail('invalid_target', `resource is required (RFC 8707): ${context.resource}`);
  if (resource !== context.resource) throw fail('invalid_target', `Tokens are issued only for ${context.resource}`);
  // Every grant carries the one scope there is; a client asking for others gets less than
  // it asked (RFC 6749 §3.3 lets the server narrow), and the token response says so.
  read('scope');
  return { client, redirectUri, codeChallenge, resource, scope: SCOPE, state };
}

/** The request as the consent form carries it in hidden fields, to be parsed again on submission. */
export function authorizeFields(request: AuthorizeRequest): Record<string, string> {
  return {
    response_type: 'code',
    client_id: request.client.id,
    redirect_uri: request.redirectUri,
    code_challenge: request.codeChallenge,
    code_challenge_method: 'S256',
    resource: request.resource,
    scope: request.scope,
    ...(request.state === undefined ? {} : { state: request.state }),
  };
}
