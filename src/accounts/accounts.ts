/**
 * Dashboard accounts above their port (DESIGN section 10): sign-up, log-in and sessions,
 * and which organisations and agents a user may see. Organisations belong to their
 * members: a user reaches an org only through `User.orgIds`, and every read here checks
 * it, so one user never sees another's org even by guessing its id. Orgs an operator
 * deleted (admin API) are skipped where a user's list still names them.
 */
import { isEmail, joinedOrg, MAX_ORGS_PER_USER, newSession, newUser, normaliseEmail, type SessionRecord, type User } from '../domain/account-records.js';
import type { Agent, Org } from '../domain/types.js';
import { EngramError } from '../errors.js';
import type { AccountStore } from '../ports/accounts.js';
import { hashToken, newSecret, sameHash, splitIdSecret } from '../security/tokens.js';
import { hashPassword, needsRehash, passwordWeakness, verifyPassword } from '../security/passwords.js';
import type { Control } from '../control/control.js';
import { Invitations } from './invitations.js';

export interface AccountsOptions {
  store: AccountStore;
  control: Control;
  now: () => number;
  /** How long a session lasts from log-in (default 7 days). */
  sessionTtlMs?: number;
}

export interface SignedIn {
  user: User;
  session: SessionRecord;
}

export const DEFAULT_SESSION_TTL_MS = 7 * 24 * 3_600_000;

/** Sign-up's one refusal for an email that cannot be used, whatever the reason (`Accounts.signUp`). */
export const EMAIL_UNAVAILABLE = 'This email cannot be used for a new account. If it is yours, log in, or open the invitation you were sent.';

function emailUnavailable(): EngramError {
  return new EngramError('conflict', EMAIL_UNAVAILABLE);
}

export class Accounts {
  readonly store: AccountStore;
  /** Members of organisations, invitations and their acceptance. */
  readonly invitations: Invitations;
  readonly #control: Control;
  readonly #now: () => number;
  readonly #sessionTtlMs: number;
  /** A hash verified when the email is unknown, so a log-in takes as long whether or not the account exists. */
  #decoy: Promise<string> | undefined;

  constructor(options: AccountsOptions) {
    this.store = options.store;
    this.#control = options.control;
    this.#now = options.now;
    this.#sessionTtlMs = options.sessionTtlMs ?? DEFAULT_SESSION_TTL_MS;
    this.invitations = new Invitations({ store: options.store, now: options.now });
  }

  /**
   * Rejects with `invalid_request` (a message for the person) or `conflict`
   * (`EMAIL_UNAVAILABLE`, whatever the reason the email cannot be used).
   *
   * Without a confirmation email, sign-up cannot hide that an email is taken from someone
   * who tries to take it: a new email gets an account, a taken one cannot. What it can do
   * is tell such a prober nothing more, and nothing for less than the price of creating
   * an account: one answer for every reason (an account, a pending invitation, a sign-up
   * of the same email an instant earlier) that names none of them, and the password hash
   * made before the email is looked up, so the refusal takes as long as a sign-up does
   * (a timing probe would otherwise cost 4 ms instead of a scrypt hash and an account).
   */
  async signUp(email: string, password: string): Promise<User> {
    const normalised = normaliseEmail(email);
    if (!isEmail(normalised)) throw new EngramError('invalid_request', 'Enter a valid email address.');
    const weakness = passwordWeakness(password, normalised);
    if (weakness) throw new EngramError('invalid_request', weakness);
    const passwordHash = await hashPassword(password);
    if (await this.store.findUserByEmail(normalised)) throw emailUnavailable();
    const user = newUser(normalised, passwordHash, this.#now());
    try {
      await this.store.createUser(user);
    } catch (error) {
      if (error instanceof EngramError && error.code === 'conflict') throw emailUnavailable();
      throw error;
    }
    return user;
  }

  /**
   * The user when the password matches; a hash made with older parameters is replaced.
   * An invited user who has not accepted yet has no password (`NO_PASSWORD`, which no
   * password verifies against) and is answered like an unknown email, in the same time.
   */
  async checkPassword(email: string, password: string): Promise<User | undefined> {
    const user = await this.store.findUserByEmail(normaliseEmail(email));
    if (!user || user.invitation) {
      this.#decoy ??= hashPassword(newSecret());
      await verifyPassword(password, await this.#decoy);
      return undefined;
    }
    if (!(await verifyPassword(password, user.passwordHash))) return undefined;
    if (needsRehash(user.passwordHash)) {
      const passwordHash = await hashPassword(password);
      await this.store.updateUser(user.id, (current) => ({ ...current, passwordHash }));
    }
    return user;
  }

  /** A new session for the user; the returned cookie value `<id>.<secret>` is its only clear copy. */
  async startSession(user: User): Promise<{ cookie: string; session: SessionRecord }> {
    const secret = newSecret();
    const session = newSession(user.id, hashToken(secret), this.#now(), this.#sessionTtlMs);
    await this.store.createSession(session);
    return { cookie: `${session.id}.${secret}`, session };
  }

  /** The signed-in user of a session cookie, or undefined (absent, malformed, unknown, expired). */
  async signedIn(cookie: string | undefined): Promise<SignedIn | undefined> {
    const session = await this.#session(cookie);
    if (!session) return undefined;
    const user = await this.store.getUser(session.userId);
    return user ? { user, session } : undefined;
  }

  async endSession(cookie: string | undefined): Promise<void> {
    const session = await this.#session(cookie);
    if (session) await this.store.deleteSession(session.id);
  }

  async #session(cookie: string | undefined): Promise<SessionRecord | undefined> {
    const parts = splitIdSecret(cookie);
    if (!parts) return undefined;
    const session = await this.store.getSession(parts.id);
    if (!session || session.expiresAt <= this.#now()) return undefined;
    return sameHash(hashToken(parts.secret), session.secretHash) ? session : undefined;
  }

  /** A new organisation with the user as its member. Rejects with `conflict` when the name is taken. */
  async createOrg(user: User, name: string): Promise<Org> {
    const trimmed = name.trim();
    if (!trimmed || trimmed.length > 100) throw new EngramError('invalid_request', 'Give the organisation a name of up to 100 characters.');
    const tooMany = () => new EngramError('invalid_request', `A user may belong to at most ${MAX_ORGS_PER_USER} organisations.`);
    // Checked on the session's copy first (no org made in vain), and again in the update.
    if (user.orgIds.length >= MAX_ORGS_PER_USER) throw tooMany();
    const org = await this.#control.createOrg(trimmed);
    try {
      const updated = await this.store.updateUser(user.id, (current) => {
        const joined = joinedOrg(current, org.id);
        if (!joined) throw tooMany();
        return joined;
      });
      if (!updated) throw new EngramError('not_found', 'Your account no longer exists.');
    } catch (error) {
      // An org nobody can reach is removed again rather than left behind.
      await this.#control.deleteOrg(org.id).catch(() => undefined);
      throw error;
    }
    return org;
  }

  /** The user's organisations that still exist, oldest membership first. */
  async orgsOf(user: User): Promise<Org[]> {
    const orgs = await Promise.all(user.orgIds.map((id) => this.#control.directory.getOrg(id)));
    return orgs.filter((org): org is Org => org !== undefined && user.orgIds.includes(org.id));
  }

  /** The org when the user is its member; undefined otherwise (never another user's). */
  async orgOf(user: User, orgId: string): Promise<Org | undefined> {
    if (!user.orgIds.includes(orgId)) return undefined;
    const org = await this.#control.directory.getOrg(orgId);
    return org?.id === orgId ? org : undefined;
  }

  /** The agent when it belongs to one of the user's orgs. */
  async agentOf(user: User, orgId: string, agentId: string): Promise<Agent | undefined> {
    if (!(await this.orgOf(user, orgId))) return undefined;
    const agent = await this.#control.directory.getAgent(orgId, agentId);
    return agent?.id === agentId && agent.orgId === orgId ? agent : undefined;
  }

  /** Every agent the user may act for, by org: the consent page's choices. */
  async agentsOf(user: User): Promise<{ org: Org; agents: Agent[] }[]> {
    const orgs = await this.orgsOf(user);
    return Promise.all(orgs.map(async (org) => ({ org, agents: await this.#control.directory.listAgents(org.id) })));
  }
}
