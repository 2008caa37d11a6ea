/**
 * Sign-up, log-in and log-out. A failed log-in says only that the email or password is
 * wrong (never which), and takes as long either way (`Accounts.checkPassword`). Sign-up is
 * rate-limited per client address; log-in per address and account, per address and per
 * account (`security/log-in-limits.ts`), so neither a guesser nor a sign-up flood gets
 * far, and one address's failures do not lock anyone else out. The address is the
 * client's as the trusted proxies tell it (`ENGRAM_TRUST_PROXY`); limits are per replica
 * (DESIGN section 11).
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.js';
import { EngramError } from '../../errors.js';
import { LogInLimits } from '../../security/log-in-limits.js';
import { RateLimiter } from '../../security/rate-limits.js';
import { safeNext, secureCookies, signIn as startSignedIn, signOut } from '../web/session.js';
import { normaliseEmail, type User } from '../../domain/account-records.js';

interface Credentials {
  email?: string;
  password?: string;
  next?: string;
}

function field(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

export const authPages: FastifyPluginAsync<{ deps: Deps }> = async (app, { deps }) => {
  const secure = secureCookies(deps.publicUrl());
  const signUps = new RateLimiter({ perMinute: 5, burst: 10 }, deps.now);
  const logIns = new LogInLimits(deps.now);

  async function signIn(reply: FastifyReply, user: User, next: string) {
    await startSignedIn(reply, deps.accounts, user, secure);
    return reply.redirect(next, 303);
  }

  function tooMany(reply: FastifyReply, waitMs: number, view: 'login' | 'signup', context: { title: string } & Record<string, unknown>) {
    reply.header('retry-after', String(Math.ceil(waitMs / 1000)));
    return reply.page(view, { ...context, error: `Too many attempts. Wait ${Math.ceil(waitMs / 1000)} seconds and try again.` }, 429);
  }

  app.get<{ Querystring: { next?: string } }>('/login', async (request, reply) => {
    const next = safeNext(request.query.next, deps.publicUrl());
    if (request.signedIn) return reply.redirect(next, 303);
    return reply.page('login', { title: 'Log in', next, signup: deps.config.signup });
  });

  app.post<{ Body: Credentials }>('/login', { preValidation: app.csrfProtection }, async (request, reply) => {
    const email = field(request.body?.email);
    const next = safeNext(request.body?.next, deps.publicUrl());
    const context = { title: 'Log in', next, email, signup: deps.config.signup };
    const wait = logIns.take(request.ip, normaliseEmail(email));
    if (wait > 0) return tooMany(reply, wait, 'login', context);
    const user = await deps.accounts.checkPassword(email, field(request.body?.password));
    if (!user) return reply.page('login', { ...context, error: 'Wrong email or password.' }, 401);
    return signIn(reply, user, next);
  });

  app.get<{ Querystring: { next?: string } }>('/signup', async (request, reply) => {
    const next = safeNext(request.query.next, deps.publicUrl());
    if (!deps.config.signup) return closed(reply);
    if (request.signedIn) return reply.redirect(next, 303);
    return reply.page('signup', { title: 'Sign up', next });
  });

  app.post<{ Body: Credentials }>('/signup', { preValidation: app.csrfProtection }, async (request, reply) => {
    if (!deps.config.signup) return closed(reply);
    const email = field(request.body?.email);
    const next = safeNext(request.body?.next, deps.publicUrl());
    const context = { title: 'Sign up', next, email };
    const wait = signUps.take(request.ip);
    if (wait > 0) return tooMany(reply, wait, 'signup', context);
    try {
      const user = await deps.accounts.signUp(email, field(request.body?.password));
      request.log.info({ user: user.id }, 'a user signed up');
      return signIn(reply, user, next);
    } catch (error) {
      if (error instanceof EngramError && (error.code === 'invalid_request' || error.code === 'conflict')) {
        return reply.page('signup', { ...context, error: error.message }, error.status);
      }
      throw error;
    }
  });

  app.post('/logout', { preValidation: app.csrfProtection }, async (request: FastifyRequest, reply) => {
    await signOut(request, reply, deps.accounts, secure);
    return reply.redirect('/login', 303);
  });
};

function closed(reply: FastifyReply) {
  return reply.page('error', { title: 'Sign-up is closed', message: 'This Engram is invite-only: ask its operator for an account.' }, 403);
}
