/**
 * The extraction pipeline's consumer, as a plugin: it starts with the app and stops
 * (waiting for in-flight jobs) when the app closes.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../deps.js';
import { createExtractionHandler, EXTRACTION_SUBJECT, type ExtractionJob } from '../memory/extraction.js';
import { createReflectionWriter } from '../memory/reflection-writer.js';
import { PROTOCOLS } from '../protocols/index.js';

export const pipelinePlugin: FastifyPluginAsync<{ deps: Deps }> = async (app, { deps }) => {
  const writer = createReflectionWriter({
    reflections: deps.reflections,
    embedder: deps.embedder,
    control: deps.control,
    now: deps.now,
  });
  const handler = createExtractionHandler({
    control: deps.control,
    writer,
    upstream: deps.upstream,
    protocols: PROTOCOLS,
    now: deps.now,
    log: app.log,
  });
  const subscription = deps.bus.consume<ExtractionJob>(EXTRACTION_SUBJECT, handler, {
    ackWaitMs: deps.config.extraction.ackWaitMs,
    maxDeliver: deps.config.extraction.maxDeliver,
    concurrency: deps.config.extraction.concurrency,
  });
  app.addHook('onClose', async () => subscription.stop());
};
