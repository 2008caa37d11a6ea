/**
 * Dashboard users, sessions and the global MCP server's OAuth state in one NATS KV
 * bucket, shared by every replica. Keys (`keys.ts`, `accountKeys`):
 *
 * | key                     | value                                               |
 * |-------------------------|-----------------------------------------------------|
 * | `user.<id>`             | User                                                |
 * | `email.<email>`         | claim `{id, name: email}` making emails unique      |
 * | `session.<id>`          | SessionRecord                                       |
 * | `client.<id>`           | OAuthClient (its first sign-in recorded, once)      |
 * | `grant.<id>`            | OAuthGrant                                          |
 * | `ugrant.<user>.<grant>` | marker `{userId, grantId}` listing a user's grants  |
 * | `signingkey`            | SigningKeyRecord                                    |
 *
 * Every value carries its full ids and readers check them (a key may hold only a digest,
 * `keyPart`). Updates are revision-checked (`kv.update(key, value, revision)`): a writer
 * that lost the race runs `change` again on the newer record, so two refreshes of one
 * grant can never both rotate it. Removals purge (`KvStore`).
 *
 * Two keys cannot change atomically, so the steps are ordered to leave nothing harmful
 * behind a crash: an email is claimed before its user is written (a claim without its
 * user is taken over once stale, `name-claims.ts`), and a grant's marker is written
 * before the grant (a marker without its grant is ignored, and swept by `prune`).
 */
import { JetStreamApiError } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { clientUnusedSince, grantDeadAt, type OAuthClient, type OAuthGrant, type SessionRecord, type SigningKeyRecord, type User } from '../../../domain/account-records.js';
import { EngramError } from '../../../errors.js';
import type { AccountStore } from '../../../ports/accounts.js';
import type { NatsContext } from '../connection.js';
import { accountKeys } from './keys.js';
import {
  byCreation,
  CallerError,
  createKey,
  forEachLimited,
  PRUNE_CONCURRENCY,
  isWrongLastSequence,
  KvStore,
  readJson,
  retryLostRaces,
  type ErrorReporter,
  type KvStoreOptions,
} from './kv-support.js';
import { NameClaims, type NameClaim } from './name-claims.js';

export interface NatsAccountStoreOptions extends KvStoreOptions {
  /** An email claim without its user, or a grant marker without its grant, counts as dead once this old. */
  staleClaimMs: number;
  now: () => number;
  onError: ErrorReporter;
}

/** A grant's entry in its user's list: the full ids (the key may hold only their digests). */
interface GrantMarker {
  userId: string;
  grantId: string;
}

/** How an update finds one kind of record, and what a change must keep of it. */
interface RecordRules<T> {
  matches: (stored: T) => boolean;
  keeps: (current: T, next: T) => boolean;
  /** The error's message when `keeps` fails. */
  broken: string;
}

/** Far more than concurrent writers of one record ever are; each lost race re-reads. */
const UPDATE_ATTEMPTS = 50;
const CONFLICT_EMAIL = 'A user with this email already exists';

/** The NATS KV AccountStore; the connection belongs to its opener. */
export class NatsAccountStore extends KvStore<NatsAccountStoreOptions> implements AccountStore {
  readonly #claims: NameClaims;

  constructor(ctx: NatsContext, kv: KV, options: NatsAccountStoreOptions) {
    super(ctx, kv, options);
    this.#claims = new NameClaims({ kv, js: ctx.js, bucket: options.bucket, staleAfterMs: options.staleClaimMs, now: options.now });
  }

  async createUser(user: User): Promise<void> {
    await this.guard('createUser', async () => {
      const emailKey = accountKeys.email(user.email);
      await this.#claims.take(emailKey, { id: user.id, name: user.email }, (held) => this.#userHolds(held), CONFLICT_EMAIL);
      const key = accountKeys.user(user.id);
      let revision: number;
      try {
        revision = await createKey(this.kv, key, JSON.stringify(user));
      } catch (error) {
        if (isWrongLastSequence(error)) {
          // Another user has this id. The claim is this writer's alone unless that user has the email too.
          if ((await this.#readUser(user.id))?.email !== user.email) await this.#claims.release(emailKey, user.id);
          throw new EngramError('conflict', 'A user with this id already exists');
        }
        // Refused by the server: nothing was written, so free the email. After a timeout the
        // user may have been written, so the claim stays (dead once stale if it was not).
        if (error instanceof JetStreamApiError) {
          await this.#claims.release(emailKey, user.id).catch((undo: unknown) => this.options.onError(undo, 'releasing an email claim'));
        }
        throw error;
      }
      if (await this.#claims.holds(emailKey, user.id)) return;
      // Another writer judged this claim dead and took it over: that writer wins.
      await this.purge(key, revision);
      throw new EngramError('conflict', CONFLICT_EMAIL);
    });
  }

  async getUser(id: string): Promise<User | undefined> {
    return this.guard('getUser', () => this.#readUser(id));
  }

  async findUserByEmail(email: string): Promise<User | undefined> {
    return this.guard('findUserByEmail', async () => {
      const claim = await readJson<NameClaim>(this.kv, accountKeys.email(email));
      if (claim?.value.name !== email) return undefined;
      const user = await this.#readUser(claim.value.id);
      return user?.email === email ? user : undefined;
    });
  }

  async updateUser(id: string, change: (current: User) => User): Promise<User | undefined> {
    return this.guard('updateUser', () =>
      this.#update(accountKeys.user(id), change, {
        matches: (stored) => stored.id === id,
        keeps: (current, next) => next.id === current.id && next.email === current.email,
        broken: 'updateUser: change must keep the user id and email',
      }),
    );
  }

  /**
   * One ordered consumer over the users, then one over the email claims: a user is listed
   * only while its email's claim names it, as `findUserByEmail` would find it (a user
   * written by a create that then lost its claim, and crashed before purging, is not).
   */
  async listUsers(): Promise<User[]> {
    return this.guard('listUsers', async () => {
      // Users first: a user's claim is written before the user, so every user seen has its claim in the later scan.
      const users = await this.scan(accountKeys.users, (entry) => entry.json<User>());
      const claims = await this.scan(accountKeys.emails, (entry) => entry.json<NameClaim>());
      const holders = new Map(claims.map(({ item }) => [item.name, item.id]));
      return users
        .map(({ item }) => item)
        .filter((user) => holders.get(user.email) === user.id)
        .sort(byCreation);
    });
  }

  async createSession(session: SessionRecord): Promise<void> {
    await this.guard('createSession', () => this.create(accountKeys.session(session.id), session, 'A session with this id already exists'));
  }

  async getSession(id: string): Promise<SessionRecord | undefined> {
    return this.guard('getSession', () => this.#read<SessionRecord>(accountKeys.session(id), id));
  }

  async deleteSession(id: string): Promise<void> {
    await this.guard('deleteSession', async () => {
      await this.purgeAll(accountKeys.session(id));
    });
  }

  async createClient(client: OAuthClient): Promise<void> {
    await this.guard('createClient', () => this.create(accountKeys.client(client.id), client, 'An OAuth client with this id already exists'));
  }

  async getClient(id: string): Promise<OAuthClient | undefined> {
    return this.guard('getClient', () => this.#read<OAuthClient>(accountKeys.client(id), id));
  }

  /** One ordered consumer over the clients. */
  async listClients(): Promise<OAuthClient[]> {
    return this.guard('listClients', async () => {
      const clients = await this.scan(accountKeys.clients, (entry) => entry.json<OAuthClient>());
      return clients.map(({ item }) => item).sort(byCreation);
    });
  }

  async clientSignedIn(id: string, at: number): Promise<void> {
    await this.guard('clientSignedIn', async () => {
      const key = accountKeys.client(id);
      // Most exchanges are by clients marked long ago: a read, and no write.
      if (typeof (await this.#read<OAuthClient>(key, id))?.signedInAt === 'number') return;
      await this.#update<OAuthClient>(key, (current) => (typeof current.signedInAt === 'number' ? current : { ...current, signedInAt: at }), {
        matches: (stored) => stored.id === id,
        keeps: (current, next) => next.id === current.id && next.createdAt === current.createdAt,
        broken: 'clientSignedIn: the client id and registration time are kept',
      });
    });
  }

  /** One ordered consumer over the clients: O(clients), which is why registration counts once a minute at most. */
  async countClients(): Promise<number> {
    return this.guard('countClients', async () => (await this.scan(accountKeys.clients, () => true)).length);
  }

  /** Scans the clients and purges the revisions seen unused, so one that signed in since the scan is kept. */
  async pruneClients(registeredBefore: number): Promise<number> {
    return this.guard('pruneClients', () =>
      this.pruneOld(accountKeys.clients, (entry) => {
        const since = clientUnusedSince(entry.json<OAuthClient>());
        return since !== null && since < registeredBefore;
      }),
    );
  }

  async createGrant(grant: OAuthGrant): Promise<void> {
    await this.guard('createGrant', async () => {
      const markerKey = accountKeys.userGrant(grant.userId, grant.id);
      const marker: GrantMarker = { userId: grant.userId, grantId: grant.id };
      await this.kv.put(markerKey, JSON.stringify(marker));
      try {
        await this.create(accountKeys.grant(grant.id), grant, 'A grant with this id already exists');
      } catch (error) {
        // The id is another user's grant: this marker would list nothing, so it goes now.
        if (error instanceof EngramError && (await this.#read<OAuthGrant>(accountKeys.grant(grant.id), grant.id))?.userId !== grant.userId) {
          await this.purgeAll(markerKey);
        }
        throw error;
      }
    });
  }

  async getGrant(id: string): Promise<OAuthGrant | undefined> {
    return this.guard('getGrant', () => this.#read<OAuthGrant>(accountKeys.grant(id), id));
  }

  async updateGrant(id: string, change: (current: OAuthGrant) => OAuthGrant): Promise<OAuthGrant | undefined> {
    return this.guard('updateGrant', () =>
      this.#update(accountKeys.grant(id), change, {
        matches: (stored) => stored.id === id,
        keeps: (current, next) => next.id === current.id && next.userId === current.userId && next.clientId === current.clientId,
        broken: 'updateGrant: change must keep the grant id, user and client',
      }),
    );
  }

  /** The user's markers with one ordered consumer, then each grant by its key. */
  async listGrants(userId: string): Promise<OAuthGrant[]> {
    return this.guard('listGrants', async () => {
      const markers = await this.scan(accountKeys.userGrants(userId), (entry) => {
        const marker = entry.json<GrantMarker>();
        return marker.userId === userId ? marker.grantId : undefined;
      });
      const grants = await Promise.all(markers.map(({ item }) => this.#read<OAuthGrant>(accountKeys.grant(item), item)));
      return grants.filter((grant): grant is OAuthGrant => grant?.userId === userId).sort(byCreation);
    });
  }

  /** `kv.create` decides: the first stored wins, and a caller refused reads the winner. */
  async signingKey(candidate: SigningKeyRecord): Promise<SigningKeyRecord> {
    return this.guard('signingKey', async () => {
      const key = accountKeys.signingKey;
      for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
        try {
          await createKey(this.kv, key, JSON.stringify(candidate));
          return candidate;
        } catch (error) {
          if (!isWrongLastSequence(error)) throw error;
        }
        const stored = await readJson<SigningKeyRecord>(this.kv, key);
        if (stored) return stored.value;
      }
      throw new Error('the signing key kept appearing and vanishing');
    });
  }

  /**
   * Scans the sessions and grants (the bucket is small: people, not requests) and purges
   * the revisions seen expired or dead, so one changed since is kept. Grant markers left
   * without their grant (a crash between the two writes) are swept once stale.
   */
  async prune(before: number): Promise<number> {
    return this.guard('prune', async () => {
      const { staleClaimMs, now } = this.options;
      const sessions = await this.scan(accountKeys.sessions, (entry) => (entry.json<SessionRecord>().expiresAt < before ? true : undefined));
      const grants = await this.scan(accountKeys.grants, (entry) => {
        const grant = entry.json<OAuthGrant>();
        return { id: grant.id, userId: grant.userId, dead: (grantDeadAt(grant) ?? Infinity) < before };
      });
      let pruned = await this.purgeScanned(sessions);
      const kept = new Set(grants.filter(({ item }) => !item.dead).map(({ item }) => `${item.userId}\n${item.id}`));
      pruned += await this.purgeScanned(
        grants.filter(({ item }) => item.dead),
        async ({ item }, purged) => {
          if (purged) await this.purgeAll(accountKeys.userGrant(item.userId, item.id));
          else kept.add(`${item.userId}\n${item.id}`); // changed since the scan: its marker stays
        },
      );
      const orphans = await this.scan(accountKeys.userGrants(), (entry) => {
        const marker = entry.json<GrantMarker>();
        const young = now() - entry.created.getTime() < staleClaimMs;
        return young || kept.has(`${marker.userId}\n${marker.grantId}`) ? undefined : marker;
      });
      await forEachLimited(orphans, PRUNE_CONCURRENCY, async ({ key, revision, item }) => {
        // Written after the scan above, or by a create that is slow beyond reason: look once more.
        const grant = await this.#read<OAuthGrant>(accountKeys.grant(item.grantId), item.grantId);
        if (grant?.userId !== item.userId) await this.purge(key, revision);
      });
      return pruned;
    });
  }

  async #readUser(id: string): Promise<User | undefined> {
    return this.#read<User>(accountKeys.user(id), id);
  }

  /** The record under `key`, unless it is another id's whose key digest collides. */
  async #read<T extends { id: string }>(key: string, id: string): Promise<T | undefined> {
    return (await readJson<T>(this.kv, key, (value) => value.id === id))?.value;
  }

  /** Whether the claim's holder is a user with that email (a live claim), `name-claims.ts`. */
  async #userHolds(held: NameClaim): Promise<boolean> {
    return (await this.#readUser(held.id))?.email === held.name;
  }

  /**
   * Read, change, write revision-checked; on a lost race, again on the newer record. A
   * `change` that throws, or one that breaks `rules.keeps`, writes nothing and rejects.
   */
  async #update<T>(key: string, change: (current: T) => T, rules: RecordRules<T>): Promise<T | undefined> {
    return retryLostRaces(UPDATE_ATTEMPTS, `${key} kept changing under ${UPDATE_ATTEMPTS} attempts to update it`, async () => {
      const stored = await readJson<T>(this.kv, key);
      if (!stored || !rules.matches(stored.value)) return undefined;
      let next: T;
      try {
        // A copy: a change that edits its argument in place must still be judged by `keeps`.
        next = change(structuredClone(stored.value));
      } catch (error) {
        throw new CallerError(error);
      }
      if (!rules.keeps(stored.value, next)) throw new CallerError(new Error(rules.broken));
      await this.kv.update(key, JSON.stringify(next), stored.revision);
      return next;
    });
  }
}
