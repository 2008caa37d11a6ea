/**
 * Access tokens: JWTs (RFC 9068 profile, `typ: at+jwt`) signed with the shared key. They
 * are short-lived (15 minutes) and bound to one resource (`aud`, RFC 8707) and one grant,
 * whose id they carry so the resource checks the grant is still live on every request:
 * revoking a connection in the dashboard cuts access at once, not at expiry.
 */
import { errors, jwtVerify, SignJWT } from 'jose';
import { newId } from '../domain/ids.js';
import type { OAuthGrant } from '../domain/account-records.js';
import { OAuthError } from './oauth-error.js';
import { SIGNING_ALG, type SigningKeys } from './signing-keys.js';

export const ACCESS_TOKEN_TTL_MS = 15 * 60_000;
const ACCESS_TOKEN_TYPE = 'at+jwt';

/** What a verified access token says. */
export interface AccessClaims {
  /** The user who consented. */
  sub: string;
  client_id: string;
  org_id: string;
  agent_id: string;
  /** The grant the token was issued from. */
  grant: string;
  scope: string;
  jti: string;
  /** Seconds since the epoch. */
  exp: number;
}

export interface AccessTokensOptions {
  keys: SigningKeys;
  /** The issuer (Engram's public URL), read per use: it is known only once the server listens. */
  issuer: () => string;
  now: () => number;
  ttlMs?: number;
}

/** Issues and verifies access tokens with the shared key, on the injected clock. */
export class AccessTokens {
  readonly #options: AccessTokensOptions;
  readonly ttlMs: number;

  constructor(options: AccessTokensOptions) {
    this.#options = options;
    this.ttlMs = options.ttlMs ?? ACCESS_TOKEN_TTL_MS;
  }

  /** A token for the grant's agent at the grant's resource. */
  async issue(grant: OAuthGrant): Promise<{ token: string; expiresIn: number }> {
    const { keys, issuer, now } = this.#options;
    const key = await keys.current();
    const issuedAt = Math.floor(now() / 1000);
    const expiresIn = Math.floor(this.ttlMs / 1000);
    const token = await new SignJWT({ client_id: grant.clientId, org_id: grant.orgId, agent_id: grant.agentId, grant: grant.id, scope: grant.scope })
      .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: ACCESS_TOKEN_TYPE })
      .setIssuer(issuer())
      .setAudience(grant.resource)
      .setSubject(grant.userId)
      .setJti(newId('jti'))
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + expiresIn)
      .sign(key.privateKey);
    return { token, expiresIn };
  }

  /**
   * The claims of a token signed by our key, issued by us, for `audience`, not expired.
   * Throws `invalid_token` otherwise; the description never repeats the token.
   */
  async verify(token: string, audience: string): Promise<AccessClaims> {
    const { keys, issuer, now } = this.#options;
    const key = await keys.current();
    try {
      const { payload, protectedHeader } = await jwtVerify(token, key.publicKey, {
        issuer: issuer(),
        audience,
        algorithms: [SIGNING_ALG],
        typ: ACCESS_TOKEN_TYPE,
        currentDate: new Date(now()),
        requiredClaims: ['sub', 'exp', 'jti'],
      });
      if (protectedHeader.kid !== key.kid) throw new OAuthError('invalid_token', 'The access token was signed by another key');
      for (const claim of ['client_id', 'org_id', 'agent_id', 'grant', 'scope'] as const) {
        if (typeof payload[claim] !== 'string') throw new OAuthError('invalid_token', `The access token has no ${claim}`);
      }
      return payload as unknown as AccessClaims;
    } catch (error) {
      if (error instanceof OAuthError) throw error;
      throw new OAuthError('invalid_token', describe(error));
    }
  }
}

function describe(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'The access token expired';
  if (error instanceof errors.JWTClaimValidationFailed && error.claim === 'aud') return 'The access token is for another resource';
  if (error instanceof errors.JWTClaimValidationFailed && error.claim === 'iss') return 'The access token was issued by another server';
  return 'The access token is not valid';
}
