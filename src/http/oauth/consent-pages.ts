/**
 * The authorization endpoint as a person sees it (`GET/POST /oauth/authorize`): the
 * request is checked first (an unknown client or redirect URI is a page; anything else
 * wrong goes back to the client), then the person logs in if needed (and comes back
 * here), then picks which of their agents the client may act for. The form carries the
 * request in hidden fields, and its answer is checked again as a new request would be.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.js';
import { EngramError } from '../../errors.js';
import { authorizeFields, type AuthorizationServer, type AuthorizeRequest } from '../../oauth/authorization-server.js';
import { OAUTH_PATHS } from '../../oauth/metadata.js';
import { OAuthError } from '../../oauth/oauth-error.js';
import type { Params } from '../../oauth/params.js';
import { requireSignedIn } from '../web/session.js';

/** Where an authorization request that failed goes: back to the client when it may, else a page for the person. */
async function failed(error: unknown, reply: FastifyReply): Promise<FastifyReply> {
  if (!(error instanceof OAuthError)) throw error;
  if (error.location) return reply.redirect(error.location, 303);
  throw new EngramError(error.status === 403 ? 'forbidden' : 'invalid_request', error.message);
}

interface ConsentBody extends Params {
  decision?: string;
  /** `<org id>/<agent id>`. */
  agent?: string;
}

function choiceOf(value: unknown): { orgId: string; agentId: string } {
  const [orgId, agentId, ...rest] = typeof value === 'string' ? value.split('/') : [];
  if (!orgId || !agentId || rest.length > 0) throw new EngramError('invalid_request', 'Choose the agent this application may act for.');
  return { orgId, agentId };
}

/** `GET/POST /oauth/authorize`, for the web scope. */
export function consentPages(server: AuthorizationServer): FastifyPluginAsync<{ deps: Deps }> {
  return async (app, { deps }) => {
    app.get(OAUTH_PATHS.authorize, async (request: FastifyRequest<{ Querystring: Params }>, reply) => {
      let authorization: AuthorizeRequest;
      try {
        authorization = await server.authorizeRequest(request.query);
      } catch (error) {
        return failed(error, reply);
      }
      // Checked first, so a bad request is answered without asking anyone to log in.
      if (!request.signedIn) {
        await requireSignedIn(request, reply);
        return reply;
      }
      const orgs = (await deps.accounts.agentsOf(request.signedIn.user)).filter(({ agents }) => agents.length > 0);
      // Allow or deny, the form's answer redirects to this callback: the only place besides Engram it may go.
      reply.formsRedirectTo(authorization.redirectUri);
      return reply.page('oauth-consent', {
        title: `Allow ${authorization.client.name}`,
        client: authorization.client.name,
        redirectHost: new URL(authorization.redirectUri).host,
        fields: authorizeFields(authorization),
        orgs,
        action: OAUTH_PATHS.authorize,
      });
    });

    app.post<{ Body: ConsentBody }>(
      OAUTH_PATHS.authorize,
      { preValidation: app.csrfProtection, preHandler: requireSignedIn },
      async (request, reply) => {
        const body = request.body ?? {};
        const user = request.signedIn?.user;
        if (!user) throw new EngramError('unauthorized', 'Log in first.');
        try {
          if (body.decision === 'deny') return reply.redirect(await server.deny(body), 303);
          if (body.decision !== 'allow') throw new EngramError('invalid_request', 'Choose Allow or Deny.');
          return reply.redirect(await server.approve(user, body, choiceOf(body.agent)), 303);
        } catch (error) {
          return failed(error, reply);
        }
      },
    );
  };
}
