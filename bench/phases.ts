/**
 * The measured phases. Each takes the two targets (upstream direct, through Engram) and
 * returns plain figures; run.ts orders them and reports.
 */
import type { Child } from './ipc.js';
import { client, closedLoop, holdStreams, interleaved, type Client, type Sent, type Target } from './load.js';
import { summarise, type Summary } from './stats.js';
import { bodyTemplate, questions, type BodyTemplate, type Protocol } from './workload.js';

export interface Bench {
  direct: Target;
  engram: Target;
  upstream: Child<unknown>;
  engramChild: Child<unknown>;
}

export interface Memory {
  rss: number;
  peak: number;
  heapUsed: number;
}

const ASKS = questions(500, 3);

export interface LatencyResult {
  protocol: Protocol;
  bodyBytes: number;
  direct: Summary;
  engram: Summary;
  addedP50: number;
  addedP99: number;
  errors: number;
  injectedShare: number;
}

/** Sequential non-streaming requests, direct and through Engram in alternating blocks. */
export async function latency(
  bench: Bench,
  protocol: Protocol,
  bytes: number,
  options: { warmup: number; requests: number; block: number; firstN: number },
): Promise<LatencyResult> {
  const template = bodyTemplate(protocol, bytes, ASKS);
  const clients = [client(bench.direct, 1), client(bench.engram, 1)];
  try {
    let n = options.firstN;
    const once = (c: Client) => c.send(protocol, template.body(n++));
    await interleaved(clients, options.warmup, options.warmup, once);
    const results = await interleaved(clients, options.requests, options.block, once);
    return compare(protocol, template, results.get(clients[0])!, results.get(clients[1])!, (s) => s.ms);
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}

function compare<S extends Sent>(protocol: Protocol, template: BodyTemplate, direct: S[], engram: S[], value: (s: S) => number): LatencyResult {
  const ok = (s: S) => s.status === 200;
  const d = summarise(direct.filter(ok).map(value));
  const e = summarise(engram.filter(ok).map(value));
  return {
    protocol,
    bodyBytes: template.bytes,
    direct: d,
    engram: e,
    addedP50: e.p50 - d.p50,
    addedP99: e.p99 - d.p99,
    errors: [...direct, ...engram].filter((s) => !ok(s)).length,
    injectedShare: engram.filter((s) => s.injected > 0).length / Math.max(1, engram.length),
  };
}

/** Sequential streamed requests: time to the first body byte, direct and through Engram. */
export async function firstByte(
  bench: Bench,
  options: { warmup: number; requests: number; block: number; firstN: number; protocol?: Protocol },
): Promise<LatencyResult & { incomplete: number }> {
  const protocol = options.protocol ?? 'messages';
  const template = bodyTemplate(protocol, 4096, ASKS);
  const clients = [client(bench.direct, 1), client(bench.engram, 1)];
  try {
    let n = options.firstN;
    const once = (c: Client) => c.stream(protocol, template.body(n++, true));
    await interleaved(clients, options.warmup, options.warmup, once);
    const results = await interleaved(clients, options.requests, options.block, once);
    const all = [...results.values()].flat();
    return {
      ...compare(protocol, template, results.get(clients[0])!, results.get(clients[1])!, (s) => s.ttfbMs),
      incomplete: all.filter((s) => !s.complete).length,
    };
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}

export interface CapacityResult {
  concurrency: number;
  direct: Awaited<ReturnType<typeof closedLoop>>;
  engram: Awaited<ReturnType<typeof closedLoop>>;
}

/** Closed-loop throughput at `concurrency`, 4 KB chat completions, after a warm-up. */
export async function capacity(
  bench: Bench,
  options: { concurrency: number; warmupMs: number; durationMs: number; firstN: number },
): Promise<CapacityResult> {
  const template = bodyTemplate('chat', 4096, ASKS);
  const make = (n: number) => template.body(n);
  const direct = client(bench.direct, options.concurrency);
  const engram = client(bench.engram, options.concurrency);
  try {
    await closedLoop(engram, 'chat', make, options.concurrency, options.warmupMs, options.firstN);
    await closedLoop(direct, 'chat', make, options.concurrency, options.warmupMs / 2, options.firstN);
    const d = await closedLoop(direct, 'chat', make, options.concurrency, options.durationMs, options.firstN + 1_000_000);
    const e = await closedLoop(engram, 'chat', make, options.concurrency, options.durationMs, options.firstN + 2_000_000);
    return { concurrency: options.concurrency, direct: d, engram: e };
  } finally {
    await Promise.all([direct.close(), engram.close()]);
  }
}

export interface StreamsResult {
  streams: number;
  completed: number;
  errors: number;
  firstError?: string;
  eachStreamMs: number;
  ttfb: Summary;
  duration: Summary;
  wallMs: number;
  /** Peak TCP connections open at the upstream: how many streams Engram ran at once. */
  upstreamPeakConnections: number;
  rssBefore: number;
  rssPeak: number;
  rssAfter: number;
}

/** `count` concurrent streams through Engram, each ~`eachMs` long at the upstream. */
export async function heldStreams(bench: Bench, options: { count: number; eachMs: number; rampMs: number; firstN: number }): Promise<StreamsResult> {
  const template = bodyTemplate('messages', 4096, ASKS);
  // A messages answer of four deltas is ten events: nine gaps.
  const chunkDelayMs = Math.round(options.eachMs / 9);
  await bench.upstream.call('enqueue', { count: options.count, text: 'Sure. Here is the plan for the change you asked about.', chunkDelayMs });
  const engram = client(bench.engram, options.count);
  try {
    await bench.engramChild.call('resetPeak');
    const before = await bench.engramChild.call<Memory>('memory');
    await bench.upstream.call('startWatch');
    const held = await holdStreams(engram, 'messages', (i) => template.body(options.firstN + i, true), options.count, options.rampMs);
    const upstreamPeakConnections = await bench.upstream.call<number>('stopWatch');
    const during = await bench.engramChild.call<Memory>('memory');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const after = await bench.engramChild.call<Memory>('memory');
    return {
      streams: held.streams,
      completed: held.completed,
      errors: held.errors,
      firstError: held.firstError,
      eachStreamMs: options.eachMs,
      ttfb: summarise(held.ttfbMs),
      duration: summarise(held.durationMs),
      wallMs: held.wallMs,
      upstreamPeakConnections,
      rssBefore: before.rss,
      rssPeak: Math.max(during.peak, after.peak),
      rssAfter: after.rss,
    };
  } finally {
    await engram.close();
    await bench.upstream.call('reset');
  }
}

export interface RetrievalResult extends Summary {
  stored: number;
  seedMs: number;
  coldMs: number;
  hitShare: number;
}

/** `retrieve()` alone inside the Engram child, over one agent with `reflections` stored. */
export function retrieval(bench: Bench, options: { reflections: number; iterations: number; warmup: number }): Promise<RetrievalResult> {
  return bench.engramChild.call<RetrievalResult>('retrieval', options, 300_000);
}
