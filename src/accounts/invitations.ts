/**
 * Giving people access to an organisation (DESIGN section 10: orgs belong to their
 * members). An operator adds an email to an org: a user with that email becomes a member
 * at once; for an email without an account, a user is created with no usable password
 * (`NO_PASSWORD`) and an invitation, whose link `<userId>.<secret>` is shown once (only
 * the secret's SHA-256 is stored). Opening the link and choosing a password accepts it:
 * the invitation is removed in the same atomic update that sets the password, so a link
 * works once, and a link replaced by a newer invitation, or expired, never works.
 *
 * Orgs are passed as ids: the caller has found the org (by id or name) already.
 */
import { hashToken, newSecret, sameHash, splitIdSecret } from '../security/tokens.js';
import {
  isEmail,
  joinedOrg,
  MAX_ORGS_PER_USER,
  newUser,
  NO_PASSWORD,
  normaliseEmail,
  type Invitation,
  type User,
} from '../domain/account-records.js';
import { EngramError } from '../errors.js';
import type { AccountStore } from '../ports/accounts.js';
import { hashPassword, passwordWeakness } from '../security/passwords.js';

export const INVITATION_TTL_MS = 7 * 24 * 3_600_000;

/** Why an invitation link does not work; each has a message for the person holding it. */
export type InvitationProblem = 'unknown' | 'used' | 'expired';

const PROBLEMS: Record<InvitationProblem, string> = {
  unknown: 'This invitation link is not valid. Check that it was copied whole, or ask for a new invitation.',
  used: 'This invitation was already used. Log in with the password chosen then.',
  expired: 'This invitation has expired. Ask whoever invited you for a new one.',
};

/** An invitation link that does not work (nothing was changed). */
export class InvitationError extends Error {
  override name = 'InvitationError';
  constructor(readonly problem: InvitationProblem) {
    super(PROBLEMS[problem]);
  }
}

export interface InvitationsOptions {
  store: AccountStore;
  now: () => number;
}

/** What adding an email to an org did; `invitation` only when a new invitation was made (its token shown once). */
export interface AddedMember {
  user: User;
  invitation?: { token: string; expiresAt: number };
}

/** How often `addMember` starts again when another writer created or accepted the same user in between. */
const ADD_ATTEMPTS = 3;

function notMember(who: string): EngramError {
  return new EngramError('not_found', `\`${who}\` is not a member of this organisation`);
}

/** Marks a change that found the user accepted in between: `addMember` starts again. */
class AcceptedMeanwhile extends Error {}

export class Invitations {
  readonly #store: AccountStore;
  readonly #now: () => number;

  constructor(options: InvitationsOptions) {
    this.#store = options.store;
    this.#now = options.now;
  }

  /**
   * Makes the email's user a member of `orgId` (idempotent), or invites the email when it
   * has no account. An email already invited and not yet accepted gets a fresh invitation
   * (the old link stops working) and the org too. Rejects with `invalid_request` (`param`
   * `email`) for something that is not an email, or for a user at the organisation limit.
   */
  async addMember(orgId: string, email: string): Promise<AddedMember> {
    const normalised = normaliseEmail(email);
    if (!isEmail(normalised)) throw new EngramError('invalid_request', 'Give a valid email address.', { param: 'email' });
    const join = (current: User): User => {
      const joined = joinedOrg(current, orgId);
      if (!joined) throw new EngramError('invalid_request', `This user already belongs to ${MAX_ORGS_PER_USER} organisations, the most one may.`, { param: 'email' });
      return joined;
    };

    for (let attempt = 1; ; attempt++) {
      const existing = await this.#store.findUserByEmail(normalised);
      if (existing && !existing.invitation) {
        const user = await this.#store.updateUser(existing.id, join);
        if (user) return { user };
      } else {
        const secret = newSecret();
        const invitation: Invitation = { secretHash: hashToken(secret), expiresAt: this.#now() + INVITATION_TTL_MS };
        const invited = (user: User) => ({ user, invitation: { token: `${user.id}.${secret}`, expiresAt: invitation.expiresAt } });
        if (existing) {
          try {
            const user = await this.#store.updateUser(existing.id, (current) => {
              if (!current.invitation) throw new AcceptedMeanwhile();
              return { ...join(current), invitation };
            });
            if (user) return invited(user);
          } catch (error) {
            if (!(error instanceof AcceptedMeanwhile)) throw error;
          }
        } else {
          const user: User = { ...newUser(normalised, NO_PASSWORD, this.#now()), orgIds: [orgId], invitation };
          try {
            await this.#store.createUser(user);
            return invited(user);
          } catch (error) {
            if (!(error instanceof EngramError && error.code === 'conflict')) throw error;
          }
        }
      }
      // Another writer created, accepted or changed this user in between: look again.
      if (attempt >= ADD_ATTEMPTS) throw new EngramError('conflict', 'This user kept changing while being added; try again.');
    }
  }

  /** The org's members, invited ones included, oldest account first. */
  async listMembers(orgId: string): Promise<User[]> {
    return (await this.#store.listUsers()).filter((user) => user.orgIds.includes(orgId));
  }

  /** Takes the org from the user (by id or email). Rejects with `not_found` when they are not its member. */
  async removeMember(orgId: string, who: string): Promise<User> {
    const user = (await this.#store.getUser(who)) ?? (await this.#store.findUserByEmail(normaliseEmail(who)));
    if (!user?.orgIds.includes(orgId)) throw notMember(who);
    const removed = await this.#store.updateUser(user.id, (current) => {
      if (!current.orgIds.includes(orgId)) throw notMember(who);
      return { ...current, orgIds: current.orgIds.filter((id) => id !== orgId) };
    });
    if (!removed) throw notMember(who);
    return removed;
  }

  /** The invited user of a link that works now; rejects with `InvitationError` otherwise. */
  async pending(token: string): Promise<User> {
    const parts = splitIdSecret(token);
    const user = parts && (await this.#store.getUser(parts.id));
    if (!parts || !user) throw new InvitationError('unknown');
    this.#check(user, hashToken(parts.secret));
    return user;
  }

  /**
   * Sets the invited user's password and removes the invitation, in one update that
   * refuses when the invitation is gone, replaced or expired by then: of two acceptances
   * of one link, one wins. Rejects with `InvitationError`, or `invalid_request` for a
   * weak password (then nothing changed and the link still works).
   */
  async accept(token: string, password: string): Promise<User> {
    const user = await this.pending(token);
    const weakness = passwordWeakness(password, user.email);
    if (weakness) throw new EngramError('invalid_request', weakness);
    const passwordHash = await hashPassword(password);
    const secretHash = hashToken(splitIdSecret(token)!.secret);
    const accepted = await this.#store.updateUser(user.id, (current) => {
      this.#check(current, secretHash);
      const { invitation: _accepted, ...rest } = current;
      return { ...rest, passwordHash };
    });
    if (!accepted) throw new InvitationError('unknown');
    return accepted;
  }

  #check(user: User, secretHash: string): void {
    // With the invitation gone, a link for this user can only be one already used (or a guess).
    if (!user.invitation) throw new InvitationError('used');
    if (!sameHash(user.invitation.secretHash, secretHash)) throw new InvitationError('unknown');
    if (user.invitation.expiresAt <= this.#now()) throw new InvitationError('expired');
  }
}
