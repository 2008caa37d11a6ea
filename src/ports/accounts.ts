/**
 * Dashboard users, their sessions, and the OAuth state of the global MCP server (DESIGN
 * section 10), shared by every replica. Records arrive whole (ids, timestamps and hashes
 * chosen above the port, `domain/account-records.ts`); an adapter never sees a password,
 * a session secret, a code or a refresh token in clear. Every adapter passes
 * `test/contracts/accounts.contract.ts`.
 *
 * Emails are unique (normalised before they reach the port): a `createUser` that would
 * break this rejects with `EngramError('conflict')` and changes nothing. Updates take a
 * `change` function and are atomic: when another writer (another replica) changed the
 * record in between, `change` runs again on the newer record, so two refreshes of one
 * grant can never both rotate it. A `change` that throws aborts the update and its error
 * reaches the caller.
 */
import type { OAuthClient, OAuthGrant, SessionRecord, SigningKeyRecord, User } from '../domain/account-records.js';

export interface AccountStore {
  createUser(user: User): Promise<void>;
  getUser(id: string): Promise<User | undefined>;
  /** `email` as normalised (`normaliseEmail`). */
  findUserByEmail(email: string): Promise<User | undefined>;
  /** Undefined when there is no such user. `change` keeps `id` and `email`. */
  updateUser(id: string, change: (current: User) => User): Promise<User | undefined>;
  /**
   * Every user as last written, oldest first (by `createdAt`, then id). Users are people,
   * not requests: a deployment has few enough to read them all (an org's members, the operator's view).
   */
  listUsers(): Promise<User[]>;

  createSession(session: SessionRecord): Promise<void>;
  /** The session, expired or not (the caller checks `expiresAt`). */
  getSession(id: string): Promise<SessionRecord | undefined>;
  deleteSession(id: string): Promise<void>;

  createClient(client: OAuthClient): Promise<void>;
  getClient(id: string): Promise<OAuthClient | undefined>;
  /**
   * Every registered client, oldest first (by `createdAt`, then id): what an archive
   * carries (`engram export`). Registrations are few (one per MCP client install).
   */
  listClients(): Promise<OAuthClient[]>;

  /**
   * Records the client's first completed sign-in: sets `signedInAt` to `at` unless it is
   * set already (the first time is kept). Nothing for an unknown client.
   */
  clientSignedIn(id: string, at: number): Promise<void>;
  /**
   * How many clients are registered, as of the call (registration's cap). May read every
   * client: callers do not count per request.
   */
  countClients(): Promise<number>;
  /**
   * Deletes the clients that never completed a sign-in and were registered before
   * `registeredBefore` (`clientUnusedSince`); a client marked signed in meanwhile is kept.
   * Returns how many it deleted.
   */
  pruneClients(registeredBefore: number): Promise<number>;

  createGrant(grant: OAuthGrant): Promise<void>;
  getGrant(id: string): Promise<OAuthGrant | undefined>;
  /** Undefined when there is no such grant. `change` keeps `id`, `userId` and `clientId`. */
  updateGrant(id: string, change: (current: OAuthGrant) => OAuthGrant): Promise<OAuthGrant | undefined>;
  /** The user's grants, revoked ones included, oldest first. */
  listGrants(userId: string): Promise<OAuthGrant[]>;

  /**
   * The signing key: the stored one, or `candidate` stored and returned when there is none
   * yet. Two replicas starting at once both get the same key (the first stored wins).
   */
  signingKey(candidate: SigningKeyRecord): Promise<SigningKeyRecord>;

  /**
   * Deletes sessions expired before `before`, and grants that can no longer be used
   * (revoked, or whose code expired unused or whose refresh token expired) before it.
   * Returns how many records it deleted.
   */
  prune(before: number): Promise<number>;

  close(): Promise<void>;
}
