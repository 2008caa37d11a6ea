/**
 * Endpoints 1 to 3 of the interface (and their companions): the agent-scoped,
 * provider-compatible surface. Each protocol route runs the conversation machine;
 * `count_tokens` and `models` pass straight through to the agent's upstream.
 *
 * Every route is served at two base URLs (DESIGN section 4): the agent's own,
 * `/v0/orgs/:org/agents/:agent/v1/...`, and the one base URL `/v1/...` that gateways
 * offer, where the token alone says which agent. Handlers take the agent from the token
 * lookup (on the long form it was checked to be the path's), so both run the same code.
 *
 * The token is checked from the headers before any byte of a body is read (an
 * `onRequest` hook), and bodies read at once are counted per client address: without a
 * token a request costs Engram a token lookup, never a buffered body.
 */
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { provideConversationMachine, type ConversationFlow } from '../conversation/actors.js';
import type { ConversationActorDeps } from '../conversation/exchange.js';
import { clientHeaders, engramHeaders, upstreamHeaders } from '../conversation/headers.js';
import { runExchange } from '../conversation/run-exchange.js';
import type { Deps } from '../deps.js';
import { toEngramError } from '../errors.js';
import { newRequestId } from '../domain/request-log.js';
import { upstreamUrl } from '../domain/base-urls.js';
import { createRetrieval } from '../memory/retrieval.js';
import { memorySearchDeps } from './memory-search-deps.js';
import { DEFAULT_PROTOCOL, modelsDialect, PROTOCOLS } from '../protocols/index.js';
import type { ErrorRenderer, UpstreamEndpoint } from '../protocols/types.js';
import { agentTokenOf, authenticateFromHeaders, closeIfBodyPending } from './before-body.js';
import { httpSink } from './http-sink.js';
import type { RequestLimits } from './request-limits.js';
import { storedResponseRoutes } from './stored-responses.js';
import { responsesSocketRoute } from './websocket/responses-socket.js';
import websocket from '@fastify/websocket';

const AGENT_PREFIX = '/v0/orgs/:org/agents/:agent';
/** Where the routes hang: the agent's own base URL, and the one base URL (the server's root). */
const PREFIXES = [AGENT_PREFIX, ''] as const;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The protocol whose envelope renders this route's errors. */
    protocol?: ErrorRenderer;
  }
}

function searchOf(url: string): string {
  const at = url.indexOf('?');
  return at === -1 ? '' : url.slice(at);
}

export interface ProxyOptions {
  deps: Deps;
  /** The app's count of bodies being read per client address (`createBodyReads`). */
  bodyReads: onRequestHookHandler;
  /** The app's per-tenant and process-wide limits. */
  limits: RequestLimits;
  /** The app's retry queue of answered turns the store refused. */
  recordings: ConversationActorDeps['recordings'];
  /** The app's turns cleaned for extraction (shared with the worker). */
  cleanedTurns: ConversationActorDeps['cleanedTurns'];
}

export const proxyRoutes: FastifyPluginAsync<ProxyOptions> = async (app: FastifyInstance, { deps, bodyReads, limits, recordings, cleanedTurns }) => {
  const retrieval = createRetrieval(memorySearchDeps(deps, app.log));
  const flow = provideConversationMachine({ ...deps, retrieval, cleanedTurns, recordings });

  // Responses' WebSocket mode shares the path of the POST (responses-socket.ts).
  await app.register(websocket, { options: { maxPayload: deps.config.websocket.maxFrameBytes } });

  // Bodies arrive as bytes whatever their declared type: parsing is the protocol's job,
  // so that bad JSON gets the protocol's own error envelope, after authentication.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: deps.config.bodyLimit }, (_request, body, done) => done(null, body));

  app.setErrorHandler((error, request, reply) => {
    const adapter = request.routeOptions.config.protocol ?? DEFAULT_PROTOCOL;
    const rendered = adapter.renderError(toEngramError(error, { what: 'The request body', bytes: deps.config.bodyLimit, setting: 'ENGRAM_BODY_LIMIT' }));
    if (rendered.status >= 500) request.log.error({ err: error }, 'proxy request failed');
    closeIfBodyPending(request, reply);
    return reply.code(rendered.status).headers(engramHeaders(0, newRequestId())).send(rendered.body);
  });
  app.decorateRequest('agentToken', null);

  // Claude Code's warm-up: `HEAD <base>/` must succeed quietly, without a token.
  for (const path of [AGENT_PREFIX, AGENT_PREFIX + '/', '/']) {
    app.head(path, async (_request, reply) => reply.code(200).send());
  }
  // The upgrade request has no body; the route checks its token itself, answering 401 over HTTP.
  for (const prefix of PREFIXES) responsesSocketRoute(app, deps, flow, prefix, limits);

  // Everything else needs the agent's token, checked from the headers before the body is read.
  await app.register(async (scope) => {
    scope.addHook('onRequest', async (request) => {
      await authenticateFromHeaders(deps.control, request, deps.adminTokenHash);
    });
    scope.addHook('onRequest', limits.onRequest);
    scope.addHook('onRequest', bodyReads);
    for (const prefix of PREFIXES) tokenRoutes(scope, deps, flow, prefix);
  });
};

function tokenRoutes(app: FastifyInstance, deps: Deps, flow: ConversationFlow, prefix: string): void {
  for (const adapter of Object.values(PROTOCOLS)) {
    app.post(prefix + adapter.upstreamPath, { config: { protocol: adapter } }, async (request, reply) => {
      const authenticated = agentTokenOf(request);
      reply.hijack();
      const raw = reply.raw;
      await runExchange(
        flow,
        {
          request: {
            adapter,
            orgId: authenticated.agent.orgId,
            agentId: authenticated.agent.id,
            headers: request.headers,
            rawBody: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
            search: searchOf(request.url),
            sink: httpSink(raw),
          },
          // Checked before the body was read (`onRequest`): the turn does not look it up again.
          authenticated,
        },
        {
          onClientGone: (callback) => raw.once('close', () => !raw.writableFinished && callback()),
          log: request.log,
          observer: app.metrics,
        },
      );
    });
  }

  /** Requests Engram does not learn from: authenticated, re-keyed and relayed as they are. */
  const passThrough = (adapterFor: (request: FastifyRequest) => UpstreamEndpoint, path: string) =>
    async (request: FastifyRequest, reply: FastifyReply) => {
      const { agent } = agentTokenOf(request);
      const secrets = await deps.control.agentSecrets(agent.id);
      const adapter = adapterFor(request);
      const controller = new AbortController();
      reply.raw.once('close', () => controller.abort());
      const response = await deps.upstream.send({
        url: upstreamUrl(agent.upstream.baseUrl, path, searchOf(request.url)),
        method: request.method === 'GET' ? 'GET' : 'POST',
        headers: upstreamHeaders(request.headers, adapter.upstreamAuth(secrets?.upstreamApiKey ?? ''), secrets?.upstreamHeaders ?? {}),
        body: Buffer.isBuffer(request.body) ? request.body : undefined,
        signal: controller.signal,
        setBy: agent.upstream.setBy,
      });
      return reply
        .code(response.status)
        .headers({ ...clientHeaders(response.headers), ...engramHeaders(0, newRequestId()) })
        .send(response.body);
    };

  storedResponseRoutes(app, deps, prefix);

  const { messages } = PROTOCOLS;
  app.post(prefix + '/v1/messages/count_tokens', { config: { protocol: messages } }, passThrough(() => messages, '/v1/messages/count_tokens'));
  // The models list is asked for in either family's dialect; the client's headers tell which.
  app.get(prefix + '/v1/models', passThrough((request) => modelsDialect(request.headers), '/v1/models'));
}
