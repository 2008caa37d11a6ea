/**
 * The dashboard's session cookie: `<session id>.<secret>` (only the secret's SHA-256 is
 * stored), HttpOnly, SameSite=Lax (an OAuth client sends the browser to `/oauth/authorize`
 * by a top-level navigation, which must carry it), Secure when Engram's public URL is https.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SignedIn } from '../../accounts/accounts.js';

export const SESSION_COOKIE = 'engram_session';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in user of the dashboard session cookie, when there is one (web pages only). */
    signedIn: SignedIn | undefined;
  }
}

export function setSessionCookie(reply: FastifyReply, value: string, options: { secure: boolean; expiresAt: number }): void {
  reply.setCookie(SESSION_COOKIE, value, { path: '/', httpOnly: true, sameSite: 'lax', secure: options.secure, expires: new Date(options.expiresAt) });
}

export function clearSessionCookie(reply: FastifyReply, options: { secure: boolean }): void {
  reply.clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'lax', secure: options.secure });
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
