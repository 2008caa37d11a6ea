/**
 * The management API (DESIGN section 4): orgs, agents, tokens, reflections, the root
 * memory index and extraction dead letters under `/v0/orgs`, JSON in snake_case, errors in the chat-completions
 * envelope. An encapsulated plugin: its auth hook and error handler apply to these
 * routes only (STYLE habit 3), never to the proxy routes that share the `/v0/orgs` prefix.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../deps.js';
import { jsonErrorHandler } from './json-errors.js';
import { authorize } from './management/access.js';
import { agentRoutes } from './management/agents.js';
import { deadLetterRoutes } from './management/dead-letters.js';
import { orgRoutes } from './management/orgs.js';
import { reflectionRoutes } from './management/reflections.js';
import { tokenRoutes } from './management/tokens.js';

/** Management bodies are small; the proxy's large limit exists for long conversations. */
const MANAGEMENT_BODY_LIMIT = 1024 * 1024;

export const managementRoutes: FastifyPluginAsync<{ deps: Deps }> = async (app, { deps }) => {
  app.setErrorHandler(jsonErrorHandler('management'));
  // onRequest runs before the body is parsed: a caller without a token learns nothing,
  // not even whether its body would have been valid.
  app.addHook('onRequest', authorize(deps));
  app.addHook('onRoute', (route) => {
    route.bodyLimit ??= Math.min(MANAGEMENT_BODY_LIMIT, deps.config.bodyLimit);
  });

  await app.register(orgRoutes, { deps });
  await app.register(agentRoutes, { deps });
  await app.register(tokenRoutes, { deps });
  await app.register(reflectionRoutes, { deps });
  await app.register(deadLetterRoutes, { deps });
};
