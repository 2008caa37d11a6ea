/**
 * The dashboard's session cookie: `<session id>.<secret>` (only the secret's SHA-256 is
 * stored), HttpOnly, SameSite=Lax (an OAuth client sends the browser to `/oauth/authorize`
 * by a top-level navigation, which must carry it), Secure when Engram's public URL is https.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Accounts, SignedIn } from '../../accounts/accounts.js';
import type { User } from '../../domain/account-records.js';

export const SESSION_COOKIE = 'engram_session';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in user of the dashboard session cookie, when there is one (web pages only). */
    signedIn: SignedIn | undefined;
  }
}

/** Whether the dashboard's cookies are marked Secure: when Engram's public URL is https. */
export function secureCookies(publicUrl: string): boolean {
  return publicUrl.startsWith('https:');
}

/** Starts a session for `user` and sets its cookie on `reply`. */
export async function signIn(reply: FastifyReply, accounts: Pick<Accounts, 'startSession'>, user: User, secure: boolean): Promise<void> {
  const { cookie, session } = await accounts.startSession(user);
  reply.setCookie(SESSION_COOKIE, cookie, { path: '/', httpOnly: true, sameSite: 'lax', secure, expires: new Date(session.expiresAt) });
}

/** Ends the request's session on the server and clears its cookie. */
export async function signOut(request: FastifyRequest, reply: FastifyReply, accounts: Pick<Accounts, 'endSession'>, secure: boolean): Promise<void> {
  await accounts.endSession(request.cookies[SESSION_COOKIE]);
  reply.clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'lax', secure });
}

/** A path on this site to come back to after logging in: never another origin (`//evil`, `/\evil`). */
export function safeNext(raw: unknown): string {
  return typeof raw === 'string' && /^\/(?![/\\])/.test(raw) && raw.length <= 4096 ? raw : '/';
}

/** Sends a visitor who is not signed in to the log-in page, then back to where they were going. */
export async function requireSignedIn(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (request.signedIn) return;
  await reply.redirect(`/login?next=${encodeURIComponent(request.url)}`, 303);
}
