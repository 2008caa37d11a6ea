/**
 * Engram's OAuth 2.1 authorization server for the global MCP server (DESIGN section 10):
 * public clients registered dynamically, the authorization code with PKCE S256, tokens
 * bound to one resource and to the one agent the user chose on the consent page. All of
 * its state is behind the accounts port (clients, grants, the signing key), so any
 * replica answers any step of a sign-in, and a restart loses none.
 *
 * A grant is the unit of revocation: its code, its refresh tokens and every access token
 * issued from it die together, whether the user revokes the connection, the client
 * revokes a token (RFC 7009), or a code or refresh token is replayed (OAuth 2.1 §4.1.3,
 * §4.3.1: a replay means a copy leaked, and the server cannot tell which holder is real).
 */
import type { Accounts } from '../accounts/accounts.js';
import { newOAuthClient, SPENT_REFRESH_KEPT, type OAuthClient, type OAuthGrant, type User } from '../domain/account-records.js';
import { newId } from '../domain/ids.js';
import type { Agent } from '../domain/types.js';
import type { AccountStore } from '../ports/accounts.js';
import type { Vault } from '../security/vault.js';
import { AccessTokens, type AccessClaims } from './access-tokens.js';
import { authorizeFields, parseAuthorizeRequest, responseLocation, type AuthorizeRequest } from './authorize-request.js';
import { authorizationServerMetadata, protectedResourceMetadata, resourceOf } from './metadata.js';
import { OAuthError } from './oauth-error.js';
import { optional, required, type Params } from './params.js';
import { parseClientMetadata, registrationResponse } from './registration.js';
import { pkceMatches, splitGrantToken } from './secrets.js';
import { hashToken, newSecret, sameHash } from '../security/tokens.js';
import { SigningKeys } from './signing-keys.js';

export { authorizeFields, type AuthorizeRequest };

/** A code is exchanged by the client within a second of the redirect; a minute is generous. */
export const CODE_TTL_MS = 60_000;
/** From the last rotation: a client used at least once a month stays signed in. */
export const REFRESH_TTL_MS = 30 * 24 * 3_600_000;
/** How stale a grant's "last used" may get before a request records it again (one write a minute at most). */
const LAST_USED_EVERY_MS = 60_000;
export const DEFAULT_MAX_CLIENTS = 10_000;
/**
 * How old the count of registered clients may get before a registration counts again:
 * counting may read every client (NATS), and registration is open to anyone. Between
 * counts a replica adds its own registrations, so the cap holds to within what other
 * replicas registered in that minute.
 */
const CLIENT_COUNT_EVERY_MS = 60_000;
/** A full registry empties as unused clients are pruned, hourly: retry in an hour. */
const FULL_RETRY_AFTER_S = 3_600;

export interface AuthorizationServerOptions {
  store: AccountStore;
  /** Who may act for which agent (`agentOf`). */
  accounts: Accounts;
  /** Seals the signing key. */
  vault: Vault;
  /** Engram's public URL without a trailing slash, read per use (known once the server listens). */
  issuer: () => string;
  now: () => number;
  /** Access token lifetime; 15 minutes by default. */
  accessTokenTtlMs?: number;
  /** Registered clients kept at once (`ENGRAM_OAUTH_MAX_CLIENTS`); 10,000 by default. */
  maxClients?: number;
}

/** The token endpoint's answer (RFC 6749 §5.1). */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/** What a valid access token lets its bearer do: act for `agent`, for `user`. */
export interface Access {
  claims: AccessClaims;
  grant: OAuthGrant;
  user: User;
  agent: Agent;
}

/** A client the user let act for one of their agents, for the dashboard's list. */
export interface Connection {
  grantId: string;
  clientName: string;
  orgName: string | undefined;
  agentId: string;
  agentName: string | undefined;
  createdAt: number;
  lastUsedAt: number | null;
}

/** The authorization server and the protected resource's token check (see the header). */
export class AuthorizationServer {
  readonly #store: AccountStore;
  readonly #accounts: Accounts;
  readonly #issuer: () => string;
  readonly #now: () => number;
  readonly #maxClients: number;
  /** Registered clients as last counted, plus those registered here since. */
  #clients: { count: number; countedAt: number } | undefined;
  /** Signs and verifies access tokens with the shared key. */
  readonly tokens: AccessTokens;

  constructor(options: AuthorizationServerOptions) {
    this.#store = options.store;
    this.#accounts = options.accounts;
    this.#issuer = options.issuer;
    this.#now = options.now;
    this.#maxClients = options.maxClients ?? DEFAULT_MAX_CLIENTS;
    const keys = new SigningKeys({ store: options.store, vault: options.vault, now: options.now });
    this.tokens = new AccessTokens({ keys, issuer: options.issuer, now: options.now, ttlMs: options.accessTokenTtlMs });
  }

  get issuer(): string {
    return this.#issuer();
  }

  /** The protected resource tokens are issued for: the global MCP server. */
  get resource(): string {
    return resourceOf(this.#issuer());
  }

  serverMetadata(): Record<string, unknown> {
    return authorizationServerMetadata(this.#issuer());
  }

  resourceMetadata(): Record<string, unknown> {
    return protectedResourceMetadata(this.#issuer());
  }

  /**
   * RFC 7591: registers a public client; answers the registration response. Anyone may
   * register, so the registry has a cap: when it is full the answer is 503
   * `temporarily_unavailable` in RFC 7591's error shape (§3.2.2), until clients that never
   * signed in are pruned (`UNUSED_CLIENT_GRACE_MS` after registering).
   */
  async register(body: unknown): Promise<Record<string, unknown>> {
    const request = parseClientMetadata(body);
    if ((await this.#registeredClients()) >= this.#maxClients) {
      throw new OAuthError(
        'temporarily_unavailable',
        `Engram holds as many registered clients as it keeps (${this.#maxClients}); clients that never sign in are removed a day after registering. Try again later.`,
        { status: 503, retryAfterSeconds: FULL_RETRY_AFTER_S },
      );
    }
    const client = newOAuthClient(request.name, request.redirectUris, this.#now());
    await this.#store.createClient(client);
    if (this.#clients) this.#clients.count++;
    return registrationResponse(client);
  }

  async #registeredClients(): Promise<number> {
    const now = this.#now();
    if (!this.#clients || now - this.#clients.countedAt >= CLIENT_COUNT_EVERY_MS) {
      this.#clients = { count: await this.#store.countClients(), countedAt: now };
    }
    return this.#clients.count;
  }

  /** Checks an authorization request; an `OAuthError` with a `location` goes back to the client, one without to the person. */
  authorizeRequest(params: Params): Promise<AuthorizeRequest> {
    return parseAuthorizeRequest(params, { getClient: (id) => this.#store.getClient(id), resource: this.resource, issuer: this.#issuer() });
  }

  /**
   * The user allowed the request for one of their agents: a grant with a one-time code
   * bound to the PKCE challenge and the redirect URI. Answers where to send the browser.
   * An agent that is not the user's is refused (403, shown to the person): the form is
   * the user's, but what it posts is checked like anything else from a browser.
   */
  async approve(user: User, params: Params, choice: { orgId: string; agentId: string }): Promise<string> {
    const request = await this.authorizeRequest(params);
    const agent = await this.#accounts.agentOf(user, choice.orgId, choice.agentId);
    if (!agent) throw new OAuthError('access_denied', 'Choose one of your own agents.', { status: 403 });
    const now = this.#now();
    const secret = newSecret();
    const grant: OAuthGrant = {
      id: newId('grt'),
      userId: user.id,
      clientId: request.client.id,
      orgId: agent.orgId,
      agentId: agent.id,
      resource: request.resource,
      scope: request.scope,
      code: { secretHash: hashToken(secret), codeChallenge: request.codeChallenge, redirectUri: request.redirectUri, expiresAt: now + CODE_TTL_MS, usedAt: null },
      refreshHash: null,
      refreshExpiresAt: null,
      spentRefreshHashes: [],
      createdAt: now,
      lastUsedAt: null,
      revokedAt: null,
    };
    await this.#store.createGrant(grant);
    return responseLocation(request.redirectUri, this.#issuer(), request.state, { code: `${grant.id}.${secret}` });
  }

  /** The user said no: `access_denied` back to the client. */
  async deny(params: Params): Promise<string> {
    const request = await this.authorizeRequest(params);
    return responseLocation(request.redirectUri, this.#issuer(), request.state, {
      error: 'access_denied',
      error_description: 'The user did not allow access',
    });
  }

  /** The token endpoint (RFC 6749 §3.2): `authorization_code` and `refresh_token` for public clients. */
  async token(params: Params): Promise<TokenResponse> {
    const grantType = required(params, 'grant_type');
    if (grantType !== 'authorization_code' && grantType !== 'refresh_token') {
      throw new OAuthError('unsupported_grant_type', `grant_type ${grantType} is not supported: use authorization_code or refresh_token`);
    }
    // Public clients identify themselves by client_id alone (OAuth 2.1 §3.2.1).
    const client = await this.#store.getClient(required(params, 'client_id'));
    if (!client) throw new OAuthError('invalid_client', 'Unknown client_id: register the client first');
    const resource = optional(params, 'resource');
    return grantType === 'authorization_code' ? this.#exchangeCode(params, client, resource) : this.#refresh(params, client.id, resource);
  }

  async #exchangeCode(params: Params, client: OAuthClient, resource: string | undefined): Promise<TokenResponse> {
    const clientId = client.id;
    const code = required(params, 'code');
    const verifier = required(params, 'code_verifier');
    const redirectUri = required(params, 'redirect_uri');
    const invalid = new OAuthError('invalid_grant', 'The authorization code is invalid or expired');
    const parts = splitGrantToken(code);
    const grant = parts && (await this.#store.getGrant(parts.grantId));
    if (!parts || !grant || grant.clientId !== clientId || !sameHash(hashToken(parts.secret), grant.code.secretHash) || grant.revokedAt !== null) {
      throw invalid;
    }
    if (grant.code.usedAt !== null) {
      await this.#revokeGrant(grant.id);
      throw new OAuthError('invalid_grant', 'The authorization code was already used: the grant and every token issued from it are revoked');
    }
    const now = this.#now();
    if (grant.code.expiresAt <= now) throw invalid;
    if (redirectUri !== grant.code.redirectUri) throw new OAuthError('invalid_grant', 'redirect_uri is not the one of the authorization request');
    if (resource !== undefined && resource !== grant.resource) throw new OAuthError('invalid_target', `The code was issued for ${grant.resource}`);
    if (!pkceMatches(verifier, grant.code.codeChallenge)) throw new OAuthError('invalid_grant', 'The code_verifier does not match the code_challenge');
    await this.#stillAllowed(grant, 'invalid_grant');
    // A client that gets this far completes a sign-in: it is kept from now on (pruning
    // takes only those that never do). Recorded before the code is spent, so a failure
    // here leaves the code usable rather than the client pruned under a live grant.
    if (typeof client.signedInAt !== 'number') await this.#store.clientSignedIn(clientId, now);

    const secret = newSecret();
    // Set by the last run of `change` (the port reruns it on a newer record).
    let outcome = 'issued' as 'issued' | 'reused' | 'revoked';
    // Atomic: of two exchanges of one code, one issues and the other revokes.
    const updated = await this.#store.updateGrant(grant.id, (current) => {
      if (current.revokedAt !== null) {
        outcome = 'revoked';
        return current;
      }
      if (current.code.usedAt !== null) {
        outcome = 'reused';
        return { ...current, revokedAt: now };
      }
      outcome = 'issued';
      return { ...current, code: { ...current.code, usedAt: now }, refreshHash: hashToken(secret), refreshExpiresAt: now + REFRESH_TTL_MS, lastUsedAt: now };
    });
    if (!updated || outcome === 'revoked') throw invalid;
    if (outcome === 'reused') throw new OAuthError('invalid_grant', 'The authorization code was already used: the grant and every token issued from it are revoked');
    return this.#tokenResponse(updated, `${grant.id}.${secret}`);
  }

  async #refresh(params: Params, clientId: string, resource: string | undefined): Promise<TokenResponse> {
    const presented = required(params, 'refresh_token');
    const invalid = new OAuthError('invalid_grant', 'The refresh token is invalid, expired or revoked');
    const parts = splitGrantToken(presented);
    const grant = parts && (await this.#store.getGrant(parts.grantId));
    if (!parts || !grant || grant.clientId !== clientId || grant.revokedAt !== null) throw invalid;
    if (resource !== undefined && resource !== grant.resource) throw new OAuthError('invalid_target', `The refresh token was issued for ${grant.resource}`);
    await this.#stillAllowed(grant, 'invalid_grant');

    const hash = hashToken(parts.secret);
    const secret = newSecret();
    const now = this.#now();
    let outcome = 'invalid' as 'rotated' | 'reused' | 'invalid';
    // Rotation is atomic: of two refreshes with one token, one rotates, the other finds it spent and revokes.
    const updated = await this.#store.updateGrant(grant.id, (current) => {
      outcome = 'invalid';
      if (current.revokedAt !== null) return current;
      if (current.refreshHash !== null && sameHash(hash, current.refreshHash)) {
        if ((current.refreshExpiresAt ?? 0) <= now) return current;
        outcome = 'rotated';
        return {
          ...current,
          refreshHash: hashToken(secret),
          refreshExpiresAt: now + REFRESH_TTL_MS,
          spentRefreshHashes: [current.refreshHash, ...current.spentRefreshHashes].slice(0, SPENT_REFRESH_KEPT),
          lastUsedAt: now,
        };
      }
      if (current.spentRefreshHashes.some((spent) => sameHash(hash, spent))) {
        outcome = 'reused';
        return { ...current, revokedAt: now };
      }
      return current;
    });
    if (outcome === 'reused') throw new OAuthError('invalid_grant', 'The refresh token was already used: the grant and every token issued from it are revoked');
    if (!updated || outcome !== 'rotated') throw invalid;
    return this.#tokenResponse(updated, `${grant.id}.${secret}`);
  }

  async #tokenResponse(grant: OAuthGrant, refreshToken: string): Promise<TokenResponse> {
    const { token, expiresIn } = await this.tokens.issue(grant);
    return { access_token: token, token_type: 'Bearer', expires_in: expiresIn, refresh_token: refreshToken, scope: grant.scope };
  }

  /**
   * RFC 7009: a refresh token or an access token revokes its grant. Unknown or invalid
   * tokens are no error (§2.2), so the answer says nothing about which tokens exist; a
   * `client_id` other than the grant's revokes nothing.
   */
  async revoke(params: Params): Promise<void> {
    const token = required(params, 'token');
    const clientId = optional(params, 'client_id');
    const grant = await this.#grantOfToken(token);
    if (grant && (clientId === undefined || clientId === grant.clientId)) await this.#revokeGrant(grant.id);
  }

  async #grantOfToken(token: string): Promise<OAuthGrant | undefined> {
    const parts = splitGrantToken(token);
    if (parts) {
      const grant = await this.#store.getGrant(parts.grantId);
      const hash = hashToken(parts.secret);
      const known = grant && ((grant.refreshHash !== null && sameHash(hash, grant.refreshHash)) || grant.spentRefreshHashes.some((spent) => sameHash(hash, spent)));
      return known ? grant : undefined;
    }
    try {
      const claims = await this.tokens.verify(token, this.resource);
      return await this.#store.getGrant(claims.grant);
    } catch (error) {
      if (error instanceof OAuthError) return undefined;
      throw error;
    }
  }

  /**
   * The protected resource's check of a bearer token: signature, issuer, audience,
   * expiry, then that its grant is live and its agent still the user's (a deleted agent
   * or a user who left the org loses access at once). Throws `invalid_token` (401).
   */
  async authenticate(token: string): Promise<Access> {
    const claims = await this.tokens.verify(token, this.resource);
    const grant = await this.#store.getGrant(claims.grant);
    if (!grant || grant.revokedAt !== null || grant.userId !== claims.sub || grant.agentId !== claims.agent_id || grant.orgId !== claims.org_id) {
      throw new OAuthError('invalid_token', 'The access token was revoked');
    }
    const { user, agent } = await this.#stillAllowed(grant, 'invalid_token');
    const now = this.#now();
    if (grant.lastUsedAt === null || now - grant.lastUsedAt >= LAST_USED_EVERY_MS) {
      await this.#store.updateGrant(grant.id, (current) => ({ ...current, lastUsedAt: Math.max(current.lastUsedAt ?? 0, now) }));
    }
    return { claims, grant, user, agent };
  }

  async #stillAllowed(grant: OAuthGrant, code: 'invalid_grant' | 'invalid_token'): Promise<{ user: User; agent: Agent }> {
    const user = await this.#store.getUser(grant.userId);
    const agent = user && (await this.#accounts.agentOf(user, grant.orgId, grant.agentId));
    if (!user || !agent) throw new OAuthError(code, 'The agent this client was allowed to act for no longer exists or is no longer yours');
    return { user, agent };
  }

  async #revokeGrant(id: string): Promise<boolean> {
    const now = this.#now();
    let revoked = false;
    await this.#store.updateGrant(id, (current) => {
      revoked = current.revokedAt === null;
      return revoked ? { ...current, revokedAt: now } : current;
    });
    return revoked;
  }

  /** The clients the user let in that can still get tokens, oldest first. */
  async connections(user: User): Promise<Connection[]> {
    const now = this.#now();
    const grants = (await this.#store.listGrants(user.id)).filter(
      (grant) => grant.revokedAt === null && grant.code.usedAt !== null && (grant.refreshExpiresAt ?? 0) > now,
    );
    if (grants.length === 0) return [];
    const agents = new Map<string, { orgName: string; agentName: string }>();
    for (const { org, agents: list } of await this.#accounts.agentsOf(user)) {
      for (const agent of list) agents.set(`${org.id}/${agent.id}`, { orgName: org.name, agentName: agent.name });
    }
    return Promise.all(
      grants.map(async (grant) => {
        const agent = agents.get(`${grant.orgId}/${grant.agentId}`);
        return {
          grantId: grant.id,
          clientName: (await this.#store.getClient(grant.clientId))?.name ?? 'A removed client',
          orgName: agent?.orgName,
          agentId: grant.agentId,
          agentName: agent?.agentName,
          createdAt: grant.createdAt,
          lastUsedAt: grant.lastUsedAt,
        };
      }),
    );
  }

  /** Revokes one of the user's own grants; false when the user has no such live grant. */
  async revokeConnection(user: User, grantId: string): Promise<boolean> {
    const grant = await this.#store.getGrant(grantId);
    if (!grant || grant.userId !== user.id) return false;
    return this.#revokeGrant(grant.id);
  }
}
