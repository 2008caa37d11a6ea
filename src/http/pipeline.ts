/**
 * The memory pipeline's consumers, as a plugin: extraction (settled conversations) and
 * tagging (reflections stored without tags). They start with the app and stop (waiting
 * for in-flight jobs) when the app closes.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../deps.js';
import { consumeExtractionJobs, createExtractionHandler } from '../memory/extraction.js';
import type { CleanedTurns } from '../memory/cleaned-turns.js';
import { createReflectionWriter } from '../memory/reflection-writer.js';
import { reembedStale } from '../memory/reembed.js';
import { consumeTaggingJobs, createTaggingHandler, type TaggingSchedule } from '../memory/tagging.js';
import { PROTOCOLS } from '../protocols/index.js';
import { memorySearchDeps } from './memory-search-deps.js';
import type { SpendMeter } from '../memory/budget.js';

/**
 * `meter`: where extraction and tagging calls count their spend, and the agents' daily
 * budgets are read from. `cleanedTurns`: the turns the proxy cleaned after its answers
 * (shared): a job's turns are redacted once in the process.
 */
export const pipelinePlugin: FastifyPluginAsync<{ deps: Deps; meter?: SpendMeter; cleanedTurns: CleanedTurns }> = async (app, { deps, meter, cleanedTurns }) => {
  const writer = createReflectionWriter({ ...deps, maxReflections: deps.config.limits.maxReflections });
  // A third of the ack wait: a crashed worker's job is redelivered soon, a slow upstream's is not.
  const heartbeatMs = Math.max(250, Math.floor(deps.config.extraction.ackWaitMs / 3));
  const schedule: TaggingSchedule = { bus: deps.bus, intervalMs: deps.config.extraction.taggingIntervalMs, now: deps.now };
  const handler = createExtractionHandler({
    control: deps.control,
    writer,
    search: memorySearchDeps(deps, app.log),
    upstream: deps.upstream,
    protocols: PROTOCOLS,
    now: deps.now,
    maxBytes: deps.config.extraction.maxBytes,
    cleaned: cleanedTurns,
    heartbeatMs,
    log: app.log,
    observer: app.metrics,
    tagging: { ...schedule, reflections: deps.reflections },
    ...(meter ? { budget: { meter, bus: deps.bus } } : {}),
  });
  const tagger = createTaggingHandler({
    control: deps.control,
    reflections: deps.reflections,
    embedder: deps.embedder,
    upstream: deps.upstream,
    protocols: PROTOCOLS,
    schedule,
    heartbeatMs,
    log: app.log,
    observer: app.metrics,
    meter,
  });
  const subscriptions = [consumeExtractionJobs(deps.bus, handler, deps.config.extraction), consumeTaggingJobs(deps.bus, tagger, deps.config.extraction)];
  // Vectors from a previous embedder are redone in the background, not before serving.
  const reembedding = new AbortController();
  let reembedded: Promise<unknown> = Promise.resolve();
  app.addHook('onReady', async () => {
    reembedded = reembedStale(deps, reembedding.signal)
      .then((count) => count > 0 && app.log.info({ count, embedder: deps.embedder.id }, 'reflections re-embedded'))
      .catch((error) => app.log.error({ err: error }, 're-embedding reflections failed'));
  });
  app.addHook('onClose', async () => {
    reembedding.abort();
    await Promise.all([reembedded, ...subscriptions.map((subscription) => subscription.stop())]);
  });
};
