/**
 * buildApp(deps): the whole HTTP surface as a Fastify instance that never listens by
 * itself, so tests use `inject()` or a port-0 listener (STYLE habit 1).
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { Role } from './config.js';
import type { Deps } from './deps.js';
import { EngramError, openAiErrorBody } from './errors.js';
import { proxyRoutes } from './http/proxy.js';
import { managementRoutes } from './http/management.js';
import { mcpRoutes } from './mcp/http-mount.js';
import { hookRoutes } from './http/hooks/index.js';
import { ENGRAM_VERSION } from './version.js';
import { maintenancePlugin } from './http/maintenance.js';
import { pipelinePlugin } from './http/pipeline.js';

export interface BuildOptions {
  logger?: boolean | { level: string };
  /**
   * What this process serves (`engram serve --role`, default `all`): `api` serves the
   * HTTP surface and only publishes extraction jobs; `worker` runs the extraction
   * consumer and housekeeping and serves no API route; `all` does both.
   */
  role?: Role;
}

export async function buildApp(deps: Deps, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: deps.config.bodyLimit,
    // Coding agents keep long streams open; Engram must not cut them.
    requestTimeout: 0,
    keepAliveTimeout: 75_000,
    forceCloseConnections: true,
    return503OnClosing: true,
  });
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send(openAiErrorBody(new EngramError('not_found', `No route for ${request.method} ${request.url.split('?')[0]}`))),
  );
  const role = options.role ?? 'all';
  if (role !== 'worker') {
    await app.register(proxyRoutes, { deps });
    await app.register(managementRoutes, { deps });
    await app.register(mcpRoutes, { deps, version: ENGRAM_VERSION });
    await app.register(hookRoutes, { deps });
  }
  if (role !== 'api') {
    await app.register(pipelinePlugin, { deps });
    await app.register(maintenancePlugin, { deps });
  }
  return app;
}
