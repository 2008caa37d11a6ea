/**
 * Accepting an invitation (`accounts/invitations.ts`): the link an operator was given
 * (`POST /v0/orgs/{org}/members`, `engram org member add`) opens a form with the email
 * and a password field; sending it sets the password, ends the invitation and signs the
 * person in. Open whether sign-up is open or closed: an invitation is how people join an
 * invite-only Engram. A link that does not work (unknown, used, expired) changes nothing
 * and says why.
 */
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { InvitationError } from '../../accounts/invitations.js';
import type { Deps } from '../../deps.js';
import { EngramError } from '../../errors.js';
import { RateLimiter } from '../../security/rate-limits.js';
import { secureCookies, signIn } from '../web/session.js';

interface InviteParams {
  token: string;
}

const TITLE = 'Accept your invitation';

/** 404 for a link that never worked, 410 for one that did and no longer does. */
function linkFailed(reply: FastifyReply, error: InvitationError) {
  const status = error.problem === 'unknown' ? 404 : 410;
  const title = error.problem === 'unknown' ? 'Invitation not found' : error.problem === 'used' ? 'Invitation already used' : 'Invitation expired';
  return reply.page('error', { title, status, message: error.message }, status);
}

export const invitePages: FastifyPluginAsync<{ deps: Deps }> = async (app, { deps }) => {
  const secure = secureCookies(deps.publicUrl());
  // Each attempt that passes the link check costs a scrypt hash: bounded like sign-up.
  const attempts = new RateLimiter({ perMinute: 10, burst: 10 }, deps.now);

  app.get<{ Params: InviteParams }>('/invite/:token', async (request, reply) => {
    const { token } = request.params;
    try {
      const user = await deps.accounts.invitations.pending(token);
      return reply.page('invite', { title: TITLE, token, email: user.email });
    } catch (error) {
      if (error instanceof InvitationError) return linkFailed(reply, error);
      throw error;
    }
  });

  app.post<{ Params: InviteParams; Body: { password?: string } }>('/invite/:token', { preValidation: app.csrfProtection }, async (request, reply) => {
    const { token } = request.params;
    const password = typeof request.body?.password === 'string' ? request.body.password : '';
    const wait = attempts.take(request.ip);
    if (wait > 0) {
      reply.header('retry-after', String(Math.ceil(wait / 1000)));
      return reply.page('error', { title: TITLE, status: 429, message: `Too many attempts. Wait ${Math.ceil(wait / 1000)} seconds and try again.` }, 429);
    }
    try {
      const user = await deps.accounts.invitations.accept(token, password);
      request.log.info({ user: user.id }, 'a user accepted an invitation');
      await signIn(reply, deps.accounts, user, secure);
      return reply.redirect('/', 303);
    } catch (error) {
      if (error instanceof InvitationError) return linkFailed(reply, error);
      if (error instanceof EngramError && error.code === 'invalid_request') {
        // A weak password: the link still works, so the form comes back with the reason.
        const user = await deps.accounts.invitations.pending(token).catch(() => undefined);
        if (user) return reply.page('invite', { title: TITLE, token, email: user.email, error: error.message }, 400);
      }
      throw error;
    }
  });
};
