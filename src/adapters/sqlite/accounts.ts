/**
 * Dashboard users, sessions and the global MCP server's OAuth state in the embedded
 * SQLite file (migration 10). Each record is one JSON column; beside it sit the columns
 * it is found or pruned by (a user's email, a session's or grant's user, expiries).
 *
 * Updates read, change and write in one `BEGIN IMMEDIATE` transaction: the write lock is
 * taken before the read, so another connection to the file (another process) waits for
 * it (busy_timeout) instead of reading the same record and overwriting this change. Not
 * group-committed (`group-commit.ts`): these writes are rare, and a sign-in should not
 * wait for the end of the event loop's turn.
 */
import { clientUnusedSince, grantDeadAt, type OAuthClient, type OAuthGrant, type SessionRecord, type SigningKeyRecord, type User } from '../../domain/account-records.js';
import type { AccountStore } from '../../ports/accounts.js';
import type { SqliteDatabase } from './database.js';
import { conflictOr } from './sqlite-errors.js';


/** How `#update` reads and writes one kind of record, and what a change must keep of it. */
interface RecordAccess<T> {
  read: () => T | undefined;
  keeps: (current: T, next: T) => boolean;
  write: (next: T) => unknown;
  /** The error's message when `keeps` fails. */
  broken: string;
}

const parse = <T>(json: string | undefined): T | undefined => (json === undefined ? undefined : (JSON.parse(json) as T));

/** The SQLite AccountStore; shares the database handle with the other stores and never closes it. */
export class SqliteAccountStore implements AccountStore {
  readonly #db: SqliteDatabase;
  readonly #sql;

  constructor(db: SqliteDatabase) {
    this.#db = db;
    this.#sql = {
      insertUser: db.prepare('INSERT INTO account_users (id, email, record) VALUES (?, ?, ?)'),
      userById: db.prepare<[string], string>('SELECT record FROM account_users WHERE id = ?').pluck(),
      userByEmail: db.prepare<[string], string>('SELECT record FROM account_users WHERE email = ?').pluck(),
      updateUser: db.prepare('UPDATE account_users SET record = ? WHERE id = ?'),
      // No column of its own for the creation time (migration 10): the record has it.
      users: db.prepare<[], string>("SELECT record FROM account_users ORDER BY json_extract(record, '$.createdAt'), id").pluck(),

      insertSession: db.prepare('INSERT INTO account_sessions (id, user_id, expires_at, record) VALUES (?, ?, ?, ?)'),
      session: db.prepare<[string], string>('SELECT record FROM account_sessions WHERE id = ?').pluck(),
      deleteSession: db.prepare('DELETE FROM account_sessions WHERE id = ?'),
      pruneSessions: db.prepare('DELETE FROM account_sessions WHERE expires_at < ?'),

      insertClient: db.prepare('INSERT INTO oauth_clients (id, unused_since, record) VALUES (?, ?, ?)'),
      client: db.prepare<[string], string>('SELECT record FROM oauth_clients WHERE id = ?').pluck(),
      // As for users: the creation time is in the record only.
      clients: db.prepare<[], string>("SELECT record FROM oauth_clients ORDER BY json_extract(record, '$.createdAt'), id").pluck(),
      updateClient: db.prepare('UPDATE oauth_clients SET unused_since = ?, record = ? WHERE id = ?'),
      countClients: db.prepare<[], number>('SELECT count(*) FROM oauth_clients').pluck(),
      pruneClients: db.prepare('DELETE FROM oauth_clients WHERE unused_since < ?'),

      insertGrant: db.prepare('INSERT INTO oauth_grants (id, user_id, created_at, dead_at, record) VALUES (?, ?, ?, ?, ?)'),
      grant: db.prepare<[string], string>('SELECT record FROM oauth_grants WHERE id = ?').pluck(),
      updateGrant: db.prepare('UPDATE oauth_grants SET dead_at = ?, record = ? WHERE id = ?'),
      grantsOf: db.prepare<[string], string>('SELECT record FROM oauth_grants WHERE user_id = ? ORDER BY created_at, id').pluck(),
      pruneGrants: db.prepare('DELETE FROM oauth_grants WHERE dead_at < ?'),

      insertSigningKey: db.prepare('INSERT INTO oauth_signing_key (slot, record) VALUES (1, ?) ON CONFLICT (slot) DO NOTHING'),
      signingKey: db.prepare<[], string>('SELECT record FROM oauth_signing_key WHERE slot = 1').pluck(),
    };
  }

  async createUser(user: User): Promise<void> {
    try {
      this.#sql.insertUser.run(user.id, user.email, JSON.stringify(user));
    } catch (error) {
      throw conflictOr(error, 'A user with this email (or id) already exists');
    }
  }

  async getUser(id: string): Promise<User | undefined> {
    return parse<User>(this.#sql.userById.get(id));
  }

  async findUserByEmail(email: string): Promise<User | undefined> {
    return parse<User>(this.#sql.userByEmail.get(email));
  }

  async updateUser(id: string, change: (current: User) => User): Promise<User | undefined> {
    return this.#update(change, {
      read: () => parse<User>(this.#sql.userById.get(id)),
      keeps: (current, next) => next.id === current.id && next.email === current.email,
      write: (next) => this.#sql.updateUser.run(JSON.stringify(next), id),
      broken: 'updateUser: change must keep the user id and email',
    });
  }

  async listUsers(): Promise<User[]> {
    return this.#sql.users.all().map((json) => JSON.parse(json) as User);
  }

  async createSession(session: SessionRecord): Promise<void> {
    try {
      this.#sql.insertSession.run(session.id, session.userId, session.expiresAt, JSON.stringify(session));
    } catch (error) {
      throw conflictOr(error, 'A session with this id already exists');
    }
  }

  async getSession(id: string): Promise<SessionRecord | undefined> {
    return parse<SessionRecord>(this.#sql.session.get(id));
  }

  async deleteSession(id: string): Promise<void> {
    this.#sql.deleteSession.run(id);
  }

  async createClient(client: OAuthClient): Promise<void> {
    try {
      this.#sql.insertClient.run(client.id, clientUnusedSince(client), JSON.stringify(client));
    } catch (error) {
      throw conflictOr(error, 'An OAuth client with this id already exists');
    }
  }

  async getClient(id: string): Promise<OAuthClient | undefined> {
    return parse<OAuthClient>(this.#sql.client.get(id));
  }

  async listClients(): Promise<OAuthClient[]> {
    return this.#sql.clients.all().map((json) => JSON.parse(json) as OAuthClient);
  }

  async clientSignedIn(id: string, at: number): Promise<void> {
    this.#db.transaction(() => {
      const client = parse<OAuthClient>(this.#sql.client.get(id));
      if (!client || typeof client.signedInAt === 'number') return;
      const signedIn: OAuthClient = { ...client, signedInAt: at };
      this.#sql.updateClient.run(clientUnusedSince(signedIn), JSON.stringify(signedIn), id);
    }).immediate();
  }

  async countClients(): Promise<number> {
    return this.#sql.countClients.get() as number;
  }

  async pruneClients(registeredBefore: number): Promise<number> {
    return this.#sql.pruneClients.run(registeredBefore).changes;
  }

  async createGrant(grant: OAuthGrant): Promise<void> {
    try {
      this.#sql.insertGrant.run(grant.id, grant.userId, grant.createdAt, grantDeadAt(grant), JSON.stringify(grant));
    } catch (error) {
      throw conflictOr(error, 'A grant with this id already exists');
    }
  }

  async getGrant(id: string): Promise<OAuthGrant | undefined> {
    return parse<OAuthGrant>(this.#sql.grant.get(id));
  }

  async updateGrant(id: string, change: (current: OAuthGrant) => OAuthGrant): Promise<OAuthGrant | undefined> {
    return this.#update(change, {
      read: () => parse<OAuthGrant>(this.#sql.grant.get(id)),
      keeps: (current, next) => next.id === current.id && next.userId === current.userId && next.clientId === current.clientId,
      write: (next) => this.#sql.updateGrant.run(grantDeadAt(next), JSON.stringify(next), id),
      broken: 'updateGrant: change must keep the grant id, user and client',
    });
  }

  async listGrants(userId: string): Promise<OAuthGrant[]> {
    return this.#sql.grantsOf.all(userId).map((json) => JSON.parse(json) as OAuthGrant);
  }

  async signingKey(candidate: SigningKeyRecord): Promise<SigningKeyRecord> {
    // One statement each, and the insert does nothing when a key is there: whoever inserted first, every caller reads that row.
    this.#sql.insertSigningKey.run(JSON.stringify(candidate));
    return JSON.parse(this.#sql.signingKey.get() as string) as SigningKeyRecord;
  }

  async prune(before: number): Promise<number> {
    return this.#db.transaction(() => this.#sql.pruneSessions.run(before).changes + this.#sql.pruneGrants.run(before).changes)();
  }

  /** Does not close the shared database handle; its opener does (see database.ts). */
  async close(): Promise<void> {}

  /**
   * Read, change, write in one IMMEDIATE transaction (see the header). A `change` that
   * throws, or one that breaks `keeps`, rolls the transaction back and rejects.
   */
  async #update<T>(change: (current: T) => T, record: RecordAccess<T>): Promise<T | undefined> {
    return this.#db.transaction(() => {
      const current = record.read();
      if (current === undefined) return undefined;
      // A copy: a change that edits its argument in place must still be judged by `keeps`.
      const next = change(structuredClone(current));
      if (!record.keeps(current, next)) throw new Error(record.broken);
      record.write(next);
      return next;
    }).immediate();
  }
}
