/**
 * buildApp(deps): the whole HTTP surface as a Fastify instance that never listens by
 * itself, so tests use `inject()` or a port-0 listener (STYLE habit 1).
 */
import Fastify, { type FastifyInstance } from 'fastify';
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
  /** Run the extraction consumer and housekeeping in this process (default true). */
  pipeline?: boolean;
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
  await app.register(proxyRoutes, { deps });
  await app.register(managementRoutes, { deps });
  await app.register(mcpRoutes, { deps, version: ENGRAM_VERSION });
  await app.register(hookRoutes, { deps });
  if (options.pipeline !== false) {
    await app.register(pipelinePlugin, { deps });
    await app.register(maintenancePlugin, { deps });
  }
  return app;
}
