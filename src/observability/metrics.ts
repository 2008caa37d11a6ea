/**
 * What Engram tells Prometheus (`GET /metrics`, DESIGN section 11). One registry per app
 * instance, never prom-client's global one: tests build many apps in one process, and
 * two apps must not add into each other's counters.
 *
 * Labels stay bounded: route patterns (never raw URLs), agent ids only once a token for
 * that agent was accepted (an unauthenticated caller cannot mint series by inventing
 * ids), protocol ids, and fixed outcome and kind vocabularies. No token, key or URL is
 * ever a label value.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { EventBus } from '../ports/index.js';
import { JOB_SUBJECTS } from '../memory/agent-jobs.js';
import type { TaggingCallOutcome, TaggingObserver } from '../memory/tagging.js';
import type { JobKind } from '../memory/agent-jobs.js';
import type { TokenUsage } from '../protocols/types.js';
import type { RecordingObserver } from '../conversation/recording-retry.js';
import type { ExchangeObserver } from '../conversation/run-exchange.js';
import type { ExtractionObserver } from '../memory/extraction.js';
import { FAILURE_REASONS } from '../memory/job-failure.js';

/**
 * How an extraction job's delivery ended: acked (extracted, or nothing left to do), to be
 * retried, dead-lettered, or deferred (queued again for the next day: the agent's daily
 * token budget is spent).
 */
export type ExtractionOutcome = 'done' | 'retry' | 'dead' | 'deferred';

/** What the rest of Engram calls; nothing else imports prom-client. */
export interface Metrics extends TaggingObserver, RecordingObserver, ExtractionObserver, ExchangeObserver {
  /** Exposition in Prometheus's text format. */
  render(): Promise<string>;
  readonly contentType: string;
  httpRequest(labels: { route: string; method: string; status: number; agent: string }): void;
  /** A proxied request's request log entry could not be written (its answer was not affected). */
  requestLogFailed(): void;
  /** One MCP POST, by its JSON-RPC method (`batch` for a batch). */
  mcpRequest(agent: string, message: unknown): void;
  extractionScheduled(): void;
  extractionStarted(): void;
  extractionFinished(outcome: ExtractionOutcome): void;
  /** One of Engram's own calls to an agent's upstream (a `job`) was answered, with the tokens the answer reports. */
  upstreamSpend(agentId: string, job: JobKind, usage: TokenUsage | undefined): void;
  embeddingFailed(): void;
}

/** JSON-RPC methods an MCP client may send; anything else is counted as `other` (a client picks the string). */
const MCP_METHODS = new Set([
  'initialize',
  'notifications/initialized',
  'notifications/cancelled',
  'ping',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
]);

/** A scrape does not wait longer than this for the bus: a stalled NATS must not stall Prometheus. */
const COLLECT_TIMEOUT_MS = 2_000;

export interface MetricsSources {
  /** Where the extraction queue's depth and dead letters are read at each scrape. */
  bus: EventBus;
  /** Told when reading the bus for a scrape failed (the gauges keep their last value). */
  onCollectError?: (error: unknown) => void;
}

export function createMetrics({ bus, onCollectError }: MetricsSources): Metrics {
  const registry = new Registry();
  const registers = [registry];
  const counter = <L extends string = never>(name: string, help: string, labelNames: readonly L[] = []) =>
    new Counter<L>({ name, help, labelNames, registers });

  const requests = counter(
    'engram_http_requests_total',
    'HTTP requests answered, by route pattern, method, status and agent id (empty when no agent token was accepted)',
    ['route', 'method', 'status', 'agent'],
  );
  const exchanges = counter(
    'engram_proxy_exchanges_total',
    'Proxied model requests (HTTP and Responses WebSocket), by agent, protocol and outcome',
    ['agent', 'protocol', 'outcome'],
  );
  const added = new Histogram({
    name: 'engram_added_latency_seconds',
    help: 'Time Engram adds to a proxied request: before the upstream request starts, plus after the upstream answer ends',
    labelNames: ['protocol'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers,
  });
  const injected = counter('engram_injected_reflections_total', 'Reflections injected into forwarded requests, by agent', ['agent']);
  const upstreamErrors = counter(
    'engram_upstream_errors_total',
    'Proxied requests whose upstream failed, by agent and kind (status_4xx, status_5xx, stream_broken, unreachable, timeout)',
    ['agent', 'kind'],
  );
  const mcp = counter(
    'engram_mcp_requests_total',
    'MCP requests (the server is stateless: one per POST), by agent and JSON-RPC method',
    ['agent', 'method'],
  );
  const scheduled = counter('engram_extraction_jobs_scheduled_total', 'Extraction jobs published to the event bus by this process');
  const started = counter(
    'engram_extraction_jobs_started_total',
    'Extraction job deliveries this process started handling (a retry counts again)',
  );
  const finished = counter(
    'engram_extraction_jobs_finished_total',
    "Extraction job deliveries this process finished, by outcome: done (acked), retry (failed, will be redelivered), dead (dead-lettered), deferred (queued for the next day: the agent's daily token budget is spent)",
    ['outcome'],
  );
  const taggingCalls = counter(
    'engram_tagging_calls_total',
    'Tagging calls this process made to agents\' upstreams, by outcome: ok (answer read), failed (the job is retried), refused (dead-lettered), no_tool_call (answered without calling record_tags: the batch stays untagged, the job ends)',
    ['outcome'],
  );
  const tagged = counter('engram_tagged_reflections_total', 'Reflections stored without tags that the tagging job gave tags');
  const dropped = counter(
    'engram_reflections_dropped_total',
    'Reflections the extraction model proposed that were not stored, by reason: restates_instructions (what the conversation\'s own instructions already say), no_content (fewer than 3 words, or than 2 content words)',
    ['reason'],
  );
  // At zero from the start, so a dashboard's rate() has a series before the first drop.
  dropped.inc({ reason: 'restates_instructions' }, 0);
  dropped.inc({ reason: 'no_content' }, 0);
  const jobFailures = counter(
    'engram_job_failures_total',
    'Failed deliveries of memory jobs, by kind (extraction, tagging) and reason: upstream_refused (a 4xx: dead-lettered), upstream_error (5xx, 408, 429), ' +
      'unreachable, timeout, no_tool_call (the model answered without calling the tool), bad_answer (not JSON, or the tool called wrongly), malformed_job, internal',
    ['kind', 'reason'],
  );
  for (const kind of Object.keys(JOB_SUBJECTS)) for (const reason of FAILURE_REASONS) jobFailures.inc({ kind, reason }, 0);
  // Agent ids here come from jobs whose agent was found: bounded by the agents that exist.
  const spendCalls = counter(
    'engram_extraction_calls_total',
    "Calls Engram made to agents' upstreams for its own jobs and that were answered, by agent and job: extraction, tagging",
    ['agent', 'job'],
  );
  const spendTokens = counter(
    'engram_extraction_tokens_total',
    "Tokens Engram's own calls to agents' upstreams used, as the answers report them, by agent, kind (input, output, and cached_input: the part of input read from the provider's prompt cache) and job (extraction, tagging)",
    ['agent', 'kind', 'job'],
  );
  const embeddingFailures = counter(
    'engram_embedding_failures_total',
    'Embedding calls that failed; a search whose query could not be embedded ran on keywords only (degraded)',
  );
  const recordingsPending = new Gauge({
    name: 'engram_recordings_pending',
    help: 'Answered turns whose recording (conversation state, extraction job, response record) the store refused, kept in this process\'s memory and retried; lost if it crashes',
    registers,
  });
  const recordingsDeferred = counter(
    'engram_recordings_deferred_total',
    'Answered turns whose recording failed with their request and were kept to be retried',
  );
  const recordingRetries = counter(
    'engram_recording_retries_total',
    'Retries of a kept turn\'s recording, by outcome: recorded (every write landed), failed (tried again later)',
    ['outcome'],
  );
  const requestLogFailures = counter(
    'engram_request_log_failures_total',
    'Proxied requests answered whose request log entry the store refused (not kept; the answer was not affected)',
  );
  const recordingsLost = counter(
    'engram_recordings_lost_total',
    'Answered turns never recorded, by reason: overflow (the retry queue was full), shutdown (still failing when Engram stopped)',
    ['reason'],
  );
  // Read from the bus at each scrape: the queue is shared by every replica. A failed read
  // keeps a kind's last value. `kind`: extraction (a conversation's new turns) or tagging
  // (reflections stored without tags).
  new Gauge({
    name: 'engram_extraction_jobs_queued',
    help: 'Memory jobs stored on the event bus and not yet done or dead-lettered (waiting ones included), all replicas together, by kind: extraction, tagging',
    labelNames: ['kind'] as const,
    registers,
    async collect() {
      for (const [kind, subject] of Object.entries(JOB_SUBJECTS)) {
        const value = await withTimeout(bus.pending(subject), COLLECT_TIMEOUT_MS).catch((error: unknown) => void onCollectError?.(error));
        if (value !== undefined) this.set({ kind }, value);
      }
    },
  });
  new Gauge({
    name: 'engram_extraction_dead_letters',
    help: 'Memory jobs dead-lettered and not yet retried (engram dead-letters list), all replicas together, by kind: extraction, tagging',
    labelNames: ['kind'] as const,
    registers,
    async collect() {
      const value = await withTimeout(bus.deadLetters(), COLLECT_TIMEOUT_MS).catch((error: unknown) => void onCollectError?.(error));
      if (value === undefined) return;
      for (const [kind, subject] of Object.entries(JOB_SUBJECTS)) this.set({ kind }, value.filter((dead) => dead.subject === subject).length);
    },
  });

  return {
    render: () => Registry.merge([registry, processMetrics()]).metrics(),
    contentType: registry.contentType,
    httpRequest({ route, method, status, agent }) {
      requests.inc({ route, method, status: String(status), agent });
    },
    exchangeFinished(summary) {
      exchanges.inc({ agent: summary.agentId, protocol: summary.protocol, outcome: summary.outcome });
      if (summary.injected > 0) injected.inc({ agent: summary.agentId }, summary.injected);
      if (summary.upstreamError) upstreamErrors.inc({ agent: summary.agentId, kind: summary.upstreamError });
      if (summary.addedMs !== undefined) added.observe({ protocol: summary.protocol }, summary.addedMs / 1000);
    },
    requestLogFailed: () => requestLogFailures.inc(),
    mcpRequest(agent, message) {
      const method = Array.isArray(message) ? 'batch' : (message as { method?: unknown } | null)?.method;
      mcp.inc({ agent, method: typeof method === 'string' && (MCP_METHODS.has(method) || method === 'batch') ? method : 'other' });
    },
    extractionScheduled: () => scheduled.inc(),
    extractionStarted: () => started.inc(),
    extractionFinished: (outcome) => finished.inc({ outcome }),
    upstreamSpend(agent, job, usage) {
      spendCalls.inc({ agent, job });
      // Zero increments still create the series, so an agent's spend reads 0 rather than absent.
      spendTokens.inc({ agent, job, kind: 'input' }, usage?.inputTokens ?? 0);
      spendTokens.inc({ agent, job, kind: 'output' }, usage?.outputTokens ?? 0);
      // Counted apart: of the input, what the provider read from its prompt cache.
      spendTokens.inc({ agent, job, kind: 'cached_input' }, usage?.cachedInputTokens ?? 0);
    },
    taggingCall: (outcome: TaggingCallOutcome) => taggingCalls.inc({ outcome }),
    reflectionsTagged: (count) => tagged.inc(count),
    reflectionsDropped: (reason, count) => dropped.inc({ reason }, count),
    jobFailed: (kind, reason) => jobFailures.inc({ kind, reason }),
    embeddingFailed: () => embeddingFailures.inc(),
    recordingsPending: (count) => recordingsPending.set(count),
    recordingDeferred: () => recordingsDeferred.inc(),
    recordingRetried: (outcome) => recordingRetries.inc({ outcome }),
    recordingsLost: (reason, count) => recordingsLost.inc({ reason }, count),
  };
}

let processRegistry: Registry | undefined;

/**
 * CPU, memory, event-loop lag, handles: they describe the process, not an app, so every
 * app of the process shows the same ones, collected once (the event-loop monitor runs
 * until the process exits; one per app would add up in a test run).
 */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, prefix: 'engram_' });
  }
  return processRegistry;
}

/** `promise`, or a rejection once `ms` have passed without its answer (a scrape or a probe must not hang on a stalled store). */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
