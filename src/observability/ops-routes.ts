/**
 * What an operator's tooling asks of every Engram process, whatever its role (DESIGN
 * section 11): `GET /healthz` (the process serves), `GET /readyz` (its stores and bus
 * answer, and every answered turn is recorded), `GET /metrics` (Prometheus text). No agent token, no per-tenant limit and no
 * body: these are added on the root instance, outside the agent-scoped plugins whose
 * hooks authenticate, count and read bodies. `/metrics` is open on the listen address
 * like most Prometheus targets, unless `ENGRAM_METRICS_REQUIRE_ADMIN` asks for the admin
 * token.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isAdmin } from '../control/auth.js';
import type { Deps } from '../deps.js';
import { EXTRACTION_SUBJECT } from '../memory/extraction-job.js';
import { safeText } from '../redaction/log-safety.js';
import { withTimeout, type Metrics } from './metrics.js';

/** A readiness check that takes longer than this counts as failed: a probe must not hang on a stalled store. */
const CHECK_TIMEOUT_MS = 2_000;

/** An id no agent or conversation has: reading it proves a store answers without touching real data. */
const PROBE_ID = 'engram-readiness-probe';

interface Check {
  name: 'control' | 'reflections' | 'bus' | 'recording';
  run(): Promise<unknown>;
}

async function runCheck(check: Check): Promise<{ name: string; ok: boolean; error?: string }> {
  try {
    await withTimeout(check.run(), CHECK_TIMEOUT_MS);
    return { name: check.name, ok: true };
  } catch (error) {
    // Answered without a token: only what the error says, with anything credential-shaped replaced.
    return { name: check.name, ok: false, error: safeText(error instanceof Error ? error.message : String(error)) };
  }
}

/** Probes and scrapes come every few seconds: their requests are logged only when something is wrong. */
const QUIET = { logLevel: 'warn' } as const;

/** The route pattern a request matched, never its raw URL (which may carry ids or credentials). */
function routeOf(request: FastifyRequest): string {
  return request.routeOptions.url ?? '(unmatched)';
}

export interface OpsOptions {
  deps: Deps;
  metrics: Metrics;
  /** Throws while answered turns wait to be recorded (`RecordingRetry.check`). */
  recording: () => void;
}

export function opsRoutes(app: FastifyInstance, { deps, metrics, recording }: OpsOptions): void {
  // Counted when the response is done, hijacked ones (the proxy's streams, MCP) included.
  app.addHook('onRequest', async (request, reply) => {
    let counted = false;
    const count = () => {
      if (counted) return;
      counted = true;
      metrics.httpRequest({
        route: routeOf(request),
        method: request.method,
        status: reply.raw.statusCode,
        // Set only once the agent's token was accepted: unknown ids never become series.
        agent: request.agentToken?.agent.id ?? '',
      });
    };
    reply.raw.once('finish', count);
    reply.raw.once('close', count);
  });

  app.get('/healthz', QUIET, async () => ({ status: 'ok' }));

  const checks: Check[] = [
    // The directory may answer from a local mirror: a conversation read reaches the store itself.
    { name: 'control', run: () => deps.control.conversations.get(PROBE_ID, PROBE_ID) },
    { name: 'reflections', run: () => deps.reflections.count(PROBE_ID) },
    { name: 'bus', run: () => deps.bus.pending(EXTRACTION_SUBJECT) },
    // The stores may answer a read while refusing writes (a full disk): turns waiting to be
    // recorded say so, and a replica that cannot record what it answers takes no more.
    { name: 'recording', run: async () => recording() },
  ];
  app.get('/readyz', QUIET, async (request, reply) => {
    const results = await Promise.all(checks.map(runCheck));
    const failed = results.filter((result) => !result.ok);
    if (failed.length > 0) {
      request.log.warn({ failed: failed.map(({ name, error }) => ({ name, error })) }, 'not ready');
      return reply.code(503).send({
        status: 'unavailable',
        failed: failed.map((result) => result.name),
        checks: Object.fromEntries(results.map(({ name, ok, error }) => [name, ok ? 'ok' : error])),
      });
    }
    return { status: 'ready', checks: Object.fromEntries(results.map(({ name }) => [name, 'ok'])) };
  });

  app.get('/metrics', QUIET, async (request, reply) => {
    if (deps.config.metricsRequireAdmin && !isAdmin(deps.adminTokenHash, request.headers)) {
      return reply
        .code(401)
        .header('www-authenticate', 'Bearer realm="engram"')
        .send({ error: { message: 'GET /metrics needs the admin token (ENGRAM_METRICS_REQUIRE_ADMIN is on)', type: 'authentication_error', code: 'unauthorized' } });
    }
    return reply.header('content-type', metrics.contentType).send(await metrics.render());
  });
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's metrics (`createMetrics`), for the plugins that count what only they see. */
    metrics: Metrics;
  }
}
