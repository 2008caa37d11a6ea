/**
 * The records of people and their sign-ins (DESIGN section 10): dashboard users and
 * their sessions, OAuth clients registered by MCP clients, and the grants a user gave
 * them. Built above the accounts port so every adapter stores the same record; secrets
 * arrive hashed (a session's or a code's secret is stored as its SHA-256, a password as a
 * self-describing scrypt hash), never in clear.
 */
import { newId } from './ids.js';

export interface User {
  id: string;
  /** Lower-cased and trimmed (`normaliseEmail`); unique. */
  email: string;
  /** `scrypt$<N>$<r>$<p>$<salt b64url>$<hash b64url>` (`security/passwords.ts`), or `NO_PASSWORD` while invited. */
  passwordHash: string;
  /** The organisations this user is a member of, oldest first. */
  orgIds: string[];
  createdAt: number;
  /**
   * Set while the user was invited and has not yet chosen a password (`accounts/invitations.ts`);
   * `passwordHash` is then `NO_PASSWORD`, so nobody can log in as them. Removed on acceptance.
   */
  invitation?: Invitation;
}

/** A pending invitation: the link holds `<userId>.<secret>`; the store holds the secret's SHA-256 (hex). */
export interface Invitation {
  secretHash: string;
  expiresAt: number;
}

/** The `passwordHash` of an invited user: no scrypt hash, so no password ever verifies against it. */
export const NO_PASSWORD = '!invited';

/** How many organisations one user may belong to. */
export const MAX_ORGS_PER_USER = 100;

/**
 * `user` as a member of `orgId` (itself when it is one already), or undefined when it
 * belongs to `MAX_ORGS_PER_USER` organisations already. Applied inside the store's
 * atomic update, so two joins at once cannot pass the limit together.
 */
export function joinedOrg(user: User, orgId: string): User | undefined {
  if (user.orgIds.includes(orgId)) return user;
  if (user.orgIds.length >= MAX_ORGS_PER_USER) return undefined;
  return { ...user, orgIds: [...user.orgIds, orgId] };
}

/** A dashboard sign-in: the cookie holds `<id>.<secret>`; the store holds the secret's SHA-256. */
export interface SessionRecord {
  id: string;
  userId: string;
  secretHash: string;
  createdAt: number;
  expiresAt: number;
}

/** A public OAuth client (RFC 7591 dynamic registration; no client secret). */
export interface OAuthClient {
  id: string;
  name: string;
  redirectUris: string[];
  createdAt: number;
  /**
   * When the client first completed a sign-in (exchanged a code for tokens); null until
   * it has. Registration is open to anyone, so a client still null once
   * `UNUSED_CLIENT_GRACE_MS` has passed is deleted (`AccountStore.pruneClients`). Absent
   * on clients registered by versions before it was kept: unknown, so never pruned.
   */
  signedInAt?: number | null;
}

/** How long a registered client may take to complete its first sign-in before it is pruned. */
export const UNUSED_CLIENT_GRACE_MS = 24 * 3_600_000;

/**
 * From when a client may be pruned as never used: its registration, while it has not
 * completed a sign-in; null once it has, or when that is unknown (an older record). Every
 * adapter prunes by this rule.
 */
export function clientUnusedSince(client: OAuthClient): number | null {
  return client.signedInAt === null ? client.createdAt : null;
}

/** The one authorization code a grant starts with (PKCE S256, single use). */
export interface GrantCode {
  secretHash: string;
  codeChallenge: string;
  redirectUri: string;
  expiresAt: number;
  /** Set when exchanged: a second exchange revokes the grant. */
  usedAt: number | null;
}

/**
 * What a user allowed one OAuth client: to act for one of their agents at one resource.
 * Refresh tokens are `<grantId>.<secret>` and rotate on every use: `refreshHash` is the
 * live one; `spentRefreshHashes` the ones already used, so presenting one again (a
 * stolen token replayed) revokes the whole grant.
 */
export interface OAuthGrant {
  id: string;
  userId: string;
  clientId: string;
  orgId: string;
  agentId: string;
  /** The protected resource (RFC 8707) the tokens are bound to, as an absolute URL. */
  resource: string;
  scope: string;
  code: GrantCode;
  refreshHash: string | null;
  refreshExpiresAt: number | null;
  spentRefreshHashes: string[];
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

/** The key that signs access tokens; the private half is sealed by the vault. */
export interface SigningKeyRecord {
  kid: string;
  alg: string;
  sealedPrivateJwk: string;
  publicJwk: Record<string, unknown>;
  createdAt: number;
}

/** How many spent refresh hashes a grant remembers (a rotation a minute for ~2 days). */
export const SPENT_REFRESH_KEPT = 64;

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

/** Whether a normalised email looks like one (a local part, an @, a domain; nothing stricter). */
export function isEmail(normalised: string): boolean {
  return EMAIL.test(normalised);
}

export function newUser(email: string, passwordHash: string, now: number): User {
  return { id: newId('usr'), email: normaliseEmail(email), passwordHash, orgIds: [], createdAt: now };
}

export function newSession(userId: string, secretHash: string, now: number, lifetimeMs: number): SessionRecord {
  return { id: newId('ses'), userId, secretHash, createdAt: now, expiresAt: now + lifetimeMs };
}

export function newOAuthClient(name: string, redirectUris: string[], now: number): OAuthClient {
  return { id: newId('cli'), name, redirectUris, createdAt: now, signedInAt: null };
}

/**
 * From when a grant can no longer be used (`AccountStore.prune`): revoked, its code
 * expired unused, or its refresh token expired; null while none of those is foreseeable
 * (a code exchanged without a refresh token). Every adapter prunes by this rule.
 */
export function grantDeadAt(grant: OAuthGrant): number | null {
  const ends = [grant.revokedAt, grant.code.usedAt === null ? grant.code.expiresAt : null, grant.refreshExpiresAt];
  const known = ends.filter((end): end is number => end !== null);
  return known.length === 0 ? null : Math.min(...known);
}
