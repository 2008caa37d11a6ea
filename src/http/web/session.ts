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

/** Where a log-in or sign-up goes when `next` is absent or is not a page of this site. */
export const DEFAULT_NEXT = '/';
const MAX_NEXT_CHARS = 4096;

/**
 * A page of this site to come back to after logging in or signing up, from a `next`
 * the visitor (or whoever sent them the link) chose. It is read as the browser will read
 * the `Location` it ends up in: by the WHATWG URL parser, against Engram's own origin.
 * That parser drops tabs and newlines and takes `\` for `/`, so `/\t/evil.example` and
 * `/\\evil.example` both mean `//evil.example`, another host; a check of the raw text
 * cannot know every such reading, so the parser decides. Kept only when it lands on
 * `ownOrigin`, and then sent re-serialised (path, query and fragment, percent-encoded:
 * nothing a header refuses), never as given. A path that would begin with `//` once sent
 * alone (`/.//evil.example` parses to the path `//evil.example`) is refused too.
 */
export function safeNext(raw: unknown, ownOrigin: string): string {
  if (typeof raw !== 'string' || raw === '' || raw.length > MAX_NEXT_CHARS) return DEFAULT_NEXT;
  let own: URL;
  let url: URL;
  try {
    own = new URL(ownOrigin);
    url = new URL(raw, own.origin);
  } catch {
    return DEFAULT_NEXT;
  }
  if (url.origin !== own.origin) return DEFAULT_NEXT;
  const path = url.pathname + url.search + url.hash;
  return path.startsWith('/') && !path.startsWith('//') && path.length <= MAX_NEXT_CHARS ? path : DEFAULT_NEXT;
}

/** Sends a visitor who is not signed in to the log-in page, then back to where they were going. */
export async function requireSignedIn(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (request.signedIn) return;
  await reply.redirect(`/login?next=${encodeURIComponent(request.url)}`, 303);
}
