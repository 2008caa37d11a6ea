/**
 * The management API (DESIGN section 4): orgs and their members, agents, tokens,
 * reflections, the root memory index, extraction jobs, dead letters and the request log under
 * `/v0/orgs`, JSON in snake_case, errors in the chat-completions envelope; its OpenAPI
 * document at `/v0/openapi.json`.
 * An encapsulated plugin: its auth hook and error handler apply to these routes only
 * (STYLE habit 3), never to the proxy routes that share the `/v0/orgs` prefix.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../deps.js';
import { jsonErrorHandler } from './json-errors.js';
import { authorize } from './management/access.js';
import { agentRoutes } from './management/agents.js';
import { deadLetterRoutes } from './management/dead-letters.js';
import { jobRoutes } from './management/jobs.js';
import { memberRoutes } from './management/members.js';
import { openApiRoute } from './management/openapi.js';
import { orgRoutes } from './management/orgs.js';
import { reflectionRoutes } from './management/reflections.js';
import { requestRoutes } from './management/requests.js';
import { tokenRoutes } from './management/tokens.js';

/** Management bodies are small; the proxy's large limit exists for long conversations. */
const MANAGEMENT_BODY_LIMIT = 1024 * 1024;

export const managementRoutes: FastifyPluginAsync<{ deps: Deps }> = async (app, { deps }) => {
  app.setErrorHandler(jsonErrorHandler('management'));
  app.addHook('onRoute', (route) => {
    route.bodyLimit ??= Math.min(MANAGEMENT_BODY_LIMIT, deps.config.bodyLimit);
  });

  // The API's description holds no data: it is served without a token, outside the
  // plugin below whose hook asks for one.
  await app.register(openApiRoute);

  await app.register(async (api) => {
    // onRequest runs before the body is parsed: a caller without a token learns nothing,
    // not even whether its body would have been valid.
    api.addHook('onRequest', authorize(deps));
    await api.register(orgRoutes, { deps });
    await api.register(memberRoutes, { deps });
    await api.register(agentRoutes, { deps });
    await api.register(tokenRoutes, { deps });
    await api.register(reflectionRoutes, { deps });
    await api.register(jobRoutes, { deps });
    await api.register(deadLetterRoutes, { deps });
    await api.register(requestRoutes, { deps });
  });
};
