/**
 * The event bus and the embedder as the app's routes and workers see them: the same
 * ports, counted and logged at their edge, so the code that publishes, consumes or
 * embeds stays unaware of metrics. Every publisher of extraction and tagging jobs (the
 * proxy, the hooks' transcript uploads, the extraction worker) and every consumer goes
 * through these.
 */
import type { BusMessage, ConsumerOptions, Embedder, EventBus } from '../ports/index.js';
import { consumerOptions } from '../ports/event-bus.js';
import type { ExtractionJob } from '../memory/extraction-job.js';
import { jobKind, type JobKind } from '../memory/agent-jobs.js';
import { safeText } from '../redaction/log-safety.js';
import type { Log } from '../log.js';
import type { ActivityRecorder } from './activity.js';
import type { Metrics } from './metrics.js';

/** The ids a log line may carry about a job: never its transcript. */
function jobFields(payload: unknown): Record<string, unknown> {
  const job = payload as Partial<ExtractionJob> | null;
  if (typeof job !== 'object' || job === null) return {};
  return {
    agentId: job.agentId,
    conversationId: job.conversationId,
    ...(job.source !== undefined ? { source: job.source } : {}),
    ...(typeof job.turnCount === 'number' && typeof job.firstTurn === 'number' ? { turns: job.turnCount - job.firstTurn } : {}),
  };
}

/**
 * Memory jobs (`jobKind`: extraction, tagging) are logged when scheduled (published),
 * started, failed (with the reason, and whether the bus will retry) and dead-lettered,
 * each line beginning with the job's kind; extraction jobs are also counted
 * (`engram_extraction_jobs_*`) and, once done, added to the agent's activity. Tagging is
 * counted by its handler, per call and per reflection.
 */
export function observedBus(bus: EventBus, metrics: Metrics, log: Log, activity: ActivityRecorder): EventBus {
  // Deliveries whose job a handler queued again for the next day (`JobDeferral.from`):
  // their ack is a deferral, not a job done. Emptied by that ack.
  const deferring = new Set<string>();
  const publish: EventBus['publish'] = async (subject, payload, options) => {
    await bus.publish(subject, payload, options);
    const name = jobKind(subject);
    if (!name) return;
    const deferral = (payload as Partial<ExtractionJob> | null)?.deferred;
    if (deferral && typeof deferral.from === 'string') {
      deferring.add(`${subject}\n${deferral.from}`);
      log.info({ ...jobFields(payload), until: new Date(deferral.until).toISOString() }, `${name} deferred: the agent's daily token budget is spent`);
      return;
    }
    if (name === 'extraction') metrics.extractionScheduled();
    const delayMs = options?.notBefore !== undefined ? Math.max(0, options.notBefore - Date.now()) : 0;
    log.info({ ...jobFields(payload), delayMs }, `${name} scheduled`);
  };
  const consume: EventBus['consume'] = <T>(subject: string, handler: (message: BusMessage<T>) => Promise<void>, options?: Partial<ConsumerOptions>) => {
    const name = jobKind(subject);
    if (!name) return bus.consume(subject, handler, options);
    const { maxDeliver } = consumerOptions(options ?? {});
    return bus.consume<T>(subject, (message) => observeDelivery(message, handler, { name, maxDeliver, metrics, log, activity, deferring }), options);
  };
  // Every other method is the bus's own, called on the bus: the port may grow without this falling behind.
  return new Proxy(bus, {
    get(target, property) {
      if (property === 'publish') return publish;
      if (property === 'consume') return consume;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

async function observeDelivery<T>(
  message: BusMessage<T>,
  handler: (message: BusMessage<T>) => Promise<void>,
  { name, maxDeliver, metrics, log, activity, deferring }: { name: JobKind; maxDeliver: number; metrics: Metrics; log: Log; activity: ActivityRecorder; deferring: Set<string> },
): Promise<void> {
  const job = jobFields(message.payload);
  const fields = { ...job, attempt: message.attempt };
  const counted = name === 'extraction';
  let settled = false;
  /** A nak, or a thrown handler (which is one): the bus redelivers it, or dead-letters it after the last allowed delivery. */
  const failed = (why: Record<string, unknown>) => {
    const last = message.attempt >= maxDeliver;
    if (counted) metrics.extractionFinished(last ? 'dead' : 'retry');
    log.warn({ ...fields, ...why }, last ? `${name} failed on its last delivery (${maxDeliver}); dead-lettered` : `${name} failed; will be retried`);
  };
  const observed: BusMessage<T> = {
    id: message.id,
    subject: message.subject,
    payload: message.payload,
    attempt: message.attempt,
    publishedAt: message.publishedAt,
    async ack() {
      await message.ack();
      settled = true;
      const deferred = deferring.delete(`${message.subject}\n${message.id}`);
      if (!counted) return;
      if (deferred) return metrics.extractionFinished('deferred');
      metrics.extractionFinished('done');
      if (typeof job.agentId === 'string') activity.record(job.agentId, { extractions: 1 });
    },
    async nak(options) {
      await message.nak(options);
      settled = true;
      failed(options?.reason === undefined ? {} : { reason: safeText(options.reason) });
    },
    async term(reason) {
      await message.term(reason);
      settled = true;
      if (counted) metrics.extractionFinished('dead');
      log.warn({ ...fields, reason: safeText(reason) }, `${name} failed; dead-lettered`);
    },
    working: () => message.working(),
  };
  if (counted) metrics.extractionStarted();
  log.info(fields, `${name} started`);
  try {
    await handler(observed);
  } catch (error) {
    if (!settled) failed({ reason: safeText(error instanceof Error ? error.message : String(error)), err: error });
    throw error;
  }
}

/** Counts failed embedding calls: a search that could not embed its query ran on keywords only. */
export function observedEmbedder(embedder: Embedder, metrics: Metrics): Embedder {
  return {
    get id() {
      return embedder.id;
    },
    get dimensions() {
      return embedder.dimensions;
    },
    get relevance() {
      return embedder.relevance;
    },
    async embed(texts, signal) {
      try {
        return await embedder.embed(texts, signal);
      } catch (error) {
        // A request that left did not see the embedder fail.
        if (!signal?.aborted) metrics.embeddingFailed();
        throw error;
      }
    },
  };
}
