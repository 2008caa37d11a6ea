/**
 * buildApp(deps): the whole HTTP surface as a Fastify instance that never listens by
 * itself, so tests use `inject()` or a port-0 listener (STYLE habit 1).
 */
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { LogFormat, Role } from './config.js';
import type { Deps } from './deps.js';
import { EngramError, openAiErrorBody } from './errors.js';
import { proxyRoutes } from './http/proxy.js';
import { managementRoutes } from './http/management.js';
import { mcpRoutes } from './mcp/http-mount.js';
import { hookRoutes } from './http/hooks/index.js';
import { webRoutes } from './http/web/plugin.js';
import { notFoundPage, unknownProxyPath, wantsPage } from './http/web/not-found.js';
import { dashboardPages } from './http/dashboard/index.js';
import { createAuthorizationServer, oauthPages, oauthRoutes } from './http/oauth/index.js';
import { globalMcpRoutes } from './mcp/global-mount.js';
import { ENGRAM_VERSION } from './version.js';
import { maintenancePlugin } from './http/maintenance.js';
import { pipelinePlugin } from './http/pipeline.js';
import { createCleanedTurns } from './memory/cleaned-turns.js';
import { safeErrorSerializer, safeRequestSerializer } from './redaction/log-safety.js';
import { continueWhenReadingBody, createBodyReads } from './http/before-body.js';
import { decorateStopping } from './http/drain.js';
import { createRequestLimits, retryAfterHeader } from './http/request-limits.js';
import { createMetrics } from './observability/metrics.js';
import { opsRoutes } from './observability/ops-routes.js';
import { observedBus, observedEmbedder } from './observability/observed-ports.js';
import { ActivityRecorder, spendMeter, withActivity } from './observability/activity.js';
import { prettyStream } from './observability/log-format.js';
import { RecordingRetry } from './conversation/recording-retry.js';

export interface BuildOptions {
  /** Fastify's logger: off, on, or a level (and a stream, for tests reading what is logged). */
  logger?: boolean | { level: string; stream?: { write(line: string): void } };
  /**
   * What this process serves (`engram serve --role`, default `all`): `api` serves the
   * HTTP surface and only publishes extraction jobs; `worker` runs the extraction
   * consumer and housekeeping and serves no API route; `all` does both.
   */
  role?: Role;
}

/**
 * The request and error serializers keep credentials out of the log (URLs, messages
 * quoting input); the pretty format renders the lines they produced.
 */
function loggerOptions(logger: BuildOptions['logger'], format: LogFormat): FastifyServerOptions['logger'] {
  if (!logger) return false;
  const options: Exclude<BuildOptions['logger'], boolean | undefined> | { stream?: undefined } = logger === true ? {} : logger;
  const stream = format === 'pretty' ? prettyStream(options.stream) : options.stream;
  return { ...options, ...(stream ? { stream } : {}), serializers: { req: safeRequestSerializer, err: (error: Error) => safeErrorSerializer(error) } };
}

/** Node checks its request timeouts every 30 s by default: too coarse for short ones. */
function timeoutCheckInterval(headersTimeoutMs: number, requestTimeoutMs: number): number {
  const shortest = requestTimeoutMs > 0 ? Math.min(headersTimeoutMs, requestTimeoutMs) : headersTimeoutMs;
  return Math.min(30_000, Math.max(50, Math.floor(shortest / 4)));
}

export async function buildApp(given: Deps, options: BuildOptions = {}): Promise<FastifyInstance> {
  const { requestTimeoutMs, headersTimeoutMs, bodiesPerAddress } = given.config.http;
  const app = Fastify({
    logger: loggerOptions(options.logger, given.config.logFormat),
    bodyLimit: given.config.bodyLimit,
    // These bound the time a client takes to *send* its request (a slow-loris body is cut
    // with 408); Node stops counting once the request has arrived, so a long answer
    // streams as long as it needs.
    requestTimeout: requestTimeoutMs,
    http: {
      headersTimeout: headersTimeoutMs,
      requestTimeout: requestTimeoutMs,
      connectionsCheckingInterval: timeoutCheckInterval(headersTimeoutMs, requestTimeoutMs),
    },
    // Behind a proxy, the client's address from the proxies the operator named (config.ts):
    // `request.ip`, which every per-address limit counts, is then the client's, not the proxy's.
    trustProxy: given.config.trustProxy,
    keepAliveTimeout: 75_000,
    forceCloseConnections: true,
    return503OnClosing: true,
  });
  // One registry per app (tests build many in one process); the routes and workers get
  // the bus and the embedder counted and logged at their edge.
  const metrics = createMetrics({ bus: given.bus, onCollectError: (error) => app.log.warn({ err: error }, 'reading the event bus for /metrics failed') });
  // The dashboard's counts over time: summed here, written every few seconds and on close.
  const activity = new ActivityRecorder({
    store: given.control.activity,
    now: given.now,
    onError: (error) => app.log.warn({ err: error }, 'writing agent activity counts failed; they are kept for the next try'),
  });
  app.addHook('onClose', () => activity.close());
  app.decorate('metrics', withActivity(metrics, activity));
  decorateStopping(app);
  const deps: Deps = { ...given, bus: observedBus(given.bus, metrics, app.log, activity), embedder: observedEmbedder(given.embedder, metrics) };
  // Answered turns the store refused, retried until it takes them; the last try is made on
  // close, before `main.ts` closes the stores.
  const recordings = new RecordingRetry({ log: app.log, observer: metrics, ...given.config.recordingRetry });
  app.addHook('onClose', () => recordings.close());
  opsRoutes(app, { deps: given, metrics, recording: () => recordings.check() });
  continueWhenReadingBody(app);
  app.addHook('onError', retryAfterHeader);
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    if (wantsPage(request)) return reply.code(404).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(notFoundPage(path));
    const message = unknownProxyPath(request.method, path, deps.publicUrl()) ?? `No route for ${request.method} ${path}`;
    return reply.code(404).send(openAiErrorBody(new EngramError('not_found', message)));
  });
  const role = options.role ?? 'all';
  // Turns cleaned for extraction, shared by the proxy (after each answer) and the worker: each is redacted once.
  const cleanedTurns = createCleanedTurns();
  if (role !== 'worker') {
    // One count for the proxy and MCP endpoints: a client address has that many bodies in flight in all.
    const bodyReads = createBodyReads(bodiesPerAddress);
    // One count of what each tenant has in flight, across every agent-scoped surface.
    const limits = createRequestLimits(deps.config.limits, deps.now);
    await app.register(proxyRoutes, { deps, bodyReads, limits, recordings, cleanedTurns });
    await app.register(managementRoutes, { deps });
    await app.register(mcpRoutes, { deps, version: ENGRAM_VERSION, bodyReads, limits });
    await app.register(hookRoutes, { deps, limits });
    // One authorization server for the OAuth endpoints, its pages and the global MCP server (it caches the signing key).
    const oauth = createAuthorizationServer(deps);
    await app.register(webRoutes, { deps, pages: [dashboardPages, oauthPages(oauth)] });
    await app.register(oauthRoutes, { deps, server: oauth });
    await app.register(globalMcpRoutes, { deps, version: ENGRAM_VERSION, server: oauth, bodyReads, limits });
  }
  if (role !== 'api') {
    await app.register(pipelinePlugin, { deps, meter: spendMeter(metrics, activity), cleanedTurns });
    await app.register(maintenancePlugin, { deps });
  }
  return app;
}
