/**
 * The machine-facing half of the authorization server (DESIGN section 10): the metadata
 * documents (RFC 9728, RFC 8414), dynamic client registration (RFC 7591), the token
 * endpoint and revocation (RFC 7009). Outside the web scope: no cookies, no CSRF, CORS
 * open (`cors.ts`). Every error is an OAuth error body; nothing secret is logged (the
 * codes and tokens travel in bodies, which are never logged).
 */
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import fastifyFormbody from '@fastify/formbody';
import type { Deps } from '../../deps.js';
import type { AuthorizationServer } from '../../oauth/authorization-server.js';
import { OAUTH_PATHS } from '../../oauth/metadata.js';
import { OAuthError } from '../../oauth/oauth-error.js';
import type { Params } from '../../oauth/params.js';
import { RateLimiter } from '../../security/rate-limits.js';
import { allowAnyOrigin } from './cors.js';

export interface OAuthRoutesOptions {
  deps: Deps;
  server: AuthorizationServer;
}

/** Registration and token bodies are a few hundred bytes. */
const BODY_LIMIT = 64 * 1024;
const FORM = 'application/x-www-form-urlencoded';

/** Per client address and replica: enough for a person signing in several clients, not for a guesser. */
const LIMITS = {
  register: { perMinute: 10, burst: 20 },
  token: { perMinute: 60, burst: 60 },
  revoke: { perMinute: 60, burst: 60 },
};

/** RFC 6749 §5.1: token responses (and their errors) are never cached. */
function noStore(reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
}

function formParams(request: FastifyRequest): Params {
  if (!String(request.headers['content-type'] ?? '').toLowerCase().startsWith(FORM)) {
    throw new OAuthError('invalid_request', `Send the parameters as ${FORM}`);
  }
  return (request.body ?? {}) as Params;
}

/** The metadata documents and the register, token and revoke endpoints, in their own scope (form bodies, CORS, OAuth errors). */
export const oauthRoutes: FastifyPluginAsync<OAuthRoutesOptions> = async (app, { deps, server }) => {
  await app.register(fastifyFormbody, { bodyLimit: BODY_LIMIT });
  allowAnyOrigin(app, [OAUTH_PATHS.resourceMetadata, OAUTH_PATHS.resourceMetadataRoot, OAUTH_PATHS.serverMetadata, OAUTH_PATHS.register, OAUTH_PATHS.token, OAUTH_PATHS.revoke]);

  // One limiter per endpoint: each route below asks once.
  const limited = (kind: keyof typeof LIMITS) => {
    const limiter = new RateLimiter(LIMITS[kind], deps.now);
    return async (request: FastifyRequest) => {
      const wait = limiter.take(request.ip);
      if (wait > 0) {
        const seconds = Math.ceil(wait / 1000);
        throw new OAuthError('temporarily_unavailable', `Too many requests from this address; retry in ${seconds} s`, { status: 429, retryAfterSeconds: seconds });
      }
    };
  };

  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    if (error instanceof OAuthError) {
      if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
      return noStore(reply).code(error.status).send(error.body());
    }
    // Fastify's own: a body that does not parse, is too large or of another type.
    if (error.statusCode !== undefined && error.statusCode < 500) {
      return noStore(reply).code(error.statusCode).send({ error: 'invalid_request', error_description: error.message });
    }
    request.log.error({ err: error }, 'an OAuth endpoint failed');
    return noStore(reply).code(500).send({ error: 'server_error', error_description: 'Something went wrong in Engram; try again' });
  });

  // RFC 9728 §3: the document for /v0/mcp, at its path-suffixed well-known address and at the root.
  const resourceMetadata = async () => server.resourceMetadata();
  app.get(OAUTH_PATHS.resourceMetadata, resourceMetadata);
  app.get(OAUTH_PATHS.resourceMetadataRoot, resourceMetadata);
  app.get(OAUTH_PATHS.serverMetadata, async () => server.serverMetadata());

  app.post(OAUTH_PATHS.register, { onRequest: limited('register') }, async (request, reply) => {
    if (!String(request.headers['content-type'] ?? '').toLowerCase().startsWith('application/json')) {
      throw new OAuthError('invalid_client_metadata', 'Send the client metadata as application/json');
    }
    return noStore(reply).code(201).send(await server.register(request.body));
  });

  app.post(OAUTH_PATHS.token, { onRequest: limited('token') }, async (request, reply) => noStore(reply).send(await server.token(formParams(request))));

  app.post(OAUTH_PATHS.revoke, { onRequest: limited('revoke') }, async (request, reply) => {
    await server.revoke(formParams(request));
    return noStore(reply).code(200).send();
  });
};
