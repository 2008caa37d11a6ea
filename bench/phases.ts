/**
 * The measured phases. Each takes the targets (upstream direct, through the bare proxy
 * and the Portkey gateway references when the bench has them, through Engram) and returns
 * plain figures; run.ts orders them and reports.
 */
import type { Child } from './ipc.js';
import { client, closedLoop, holdStreams, interleaved, type ClosedLoop, type Client, type Sent, type Target } from './load.js';
import { ratioTo, summarise, type Summary } from './stats.js';
import { bodyTemplate, questions, type BodyTemplate, type Protocol } from './workload.js';

export interface Bench {
  direct: Target;
  /** The bare Node proxy (issue 12): measured beside direct and Engram where it is set. */
  bare?: Target;
  /** The Portkey gateway (issue 22): measured beside the others where it is set (chat completions only). */
  gateway?: Target;
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
  /** The bare proxy, what it added over direct, and Engram's added time as a multiple of it. */
  bare?: Summary;
  bareAddedP50?: number;
  bareAddedP99?: number;
  vsBare?: VsBare;
  /** The Portkey gateway, what it added over direct, and Engram's added time as a multiple of it. */
  gateway?: Summary;
  gatewayAddedP50?: number;
  gatewayAddedP99?: number;
  vsGateway?: VsGateway;
}

/** Engram's added time over the bare proxy's added time (null: the bare proxy added nothing measurable). */
export interface VsBare {
  addedP50Ratio: number | null;
  addedP99Ratio: number | null;
}

/** Engram's added time over the gateway's (null: the gateway added nothing measurable). */
export type VsGateway = VsBare;

/** The clients of a sequential phase, in interleaving order: direct, bare and gateway (if any), Engram. */
function sequentialClients(bench: Bench): { clients: Client[]; bare?: Client; gateway?: Client } {
  const direct = client(bench.direct, 1);
  const bare = bench.bare ? client(bench.bare, 1) : undefined;
  const gateway = bench.gateway ? client(bench.gateway, 1) : undefined;
  return { clients: [direct, ...(bare ? [bare] : []), ...(gateway ? [gateway] : []), client(bench.engram, 1)], bare, gateway };
}

/** Sequential non-streaming requests, direct, bare and through Engram in alternating blocks. */
export async function latency(
  bench: Bench,
  protocol: Protocol,
  bytes: number,
  options: { warmup: number; requests: number; block: number; firstN: number },
): Promise<LatencyResult> {
  const template = bodyTemplate(protocol, bytes, ASKS);
  const { clients, bare, gateway } = sequentialClients(bench);
  try {
    let n = options.firstN;
    const once = (c: Client) => c.send(protocol, template.body(n++));
    await interleaved(clients, options.warmup, options.warmup, once);
    const results = await interleaved(clients, options.requests, options.block, once);
    return compare(protocol, template, results.get(clients[0])!, results.get(clients.at(-1)!)!, (s) => s.ms, {
      bare: bare && results.get(bare),
      gateway: gateway && results.get(gateway),
    });
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}

function compare<S extends Sent>(
  protocol: Protocol,
  template: BodyTemplate,
  direct: S[],
  engram: S[],
  value: (s: S) => number,
  references: { bare?: S[]; gateway?: S[] } = {},
): LatencyResult {
  const { bare, gateway } = references;
  const ok = (s: S) => s.status === 200;
  const d = summarise(direct.filter(ok).map(value));
  const e = summarise(engram.filter(ok).map(value));
  const result: LatencyResult = {
    protocol,
    bodyBytes: template.bytes,
    direct: d,
    engram: e,
    addedP50: e.p50 - d.p50,
    addedP99: e.p99 - d.p99,
    errors: [...direct, ...engram, ...(bare ?? []), ...(gateway ?? [])].filter((s) => !ok(s)).length,
    injectedShare: engram.filter((s) => s.injected > 0).length / Math.max(1, engram.length),
  };
  const versus = (samples: S[]) => {
    const summary = summarise(samples.filter(ok).map(value));
    const added = { p50: summary.p50 - d.p50, p99: summary.p99 - d.p99 };
    return { summary, added, ratios: { addedP50Ratio: ratioTo(result.addedP50, added.p50), addedP99Ratio: ratioTo(result.addedP99, added.p99) } };
  };
  if (bare) {
    const b = versus(bare);
    Object.assign(result, { bare: b.summary, bareAddedP50: b.added.p50, bareAddedP99: b.added.p99, vsBare: b.ratios });
  }
  if (gateway) {
    const g = versus(gateway);
    Object.assign(result, { gateway: g.summary, gatewayAddedP50: g.added.p50, gatewayAddedP99: g.added.p99, vsGateway: g.ratios });
  }
  return result;
}

/** Sequential streamed requests: time to the first body byte, direct, bare and through Engram. */
export async function firstByte(
  bench: Bench,
  options: { warmup: number; requests: number; block: number; firstN: number; protocol?: Protocol },
): Promise<LatencyResult & { incomplete: number }> {
  const protocol = options.protocol ?? 'messages';
  const template = bodyTemplate(protocol, 4096, ASKS);
  const { clients, bare, gateway } = sequentialClients(bench);
  try {
    let n = options.firstN;
    const once = (c: Client) => c.stream(protocol, template.body(n++, true));
    await interleaved(clients, options.warmup, options.warmup, once);
    const results = await interleaved(clients, options.requests, options.block, once);
    const all = [...results.values()].flat();
    return {
      ...compare(protocol, template, results.get(clients[0])!, results.get(clients.at(-1)!)!, (s) => s.ttfbMs, {
        bare: bare && results.get(bare),
        gateway: gateway && results.get(gateway),
      }),
      incomplete: all.filter((s) => !s.complete).length,
    };
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}

export interface CapacityResult {
  concurrency: number;
  direct: ClosedLoop;
  engram: ClosedLoop;
  bare?: ClosedLoop;
  vsBare?: CapacityVsBare;
  gateway?: ClosedLoop;
  vsGateway?: CapacityVsGateway;
}

/**
 * Engram under load against the bare proxy under the same load: req/s over the bare
 * proxy's req/s, and the p99 each adds over direct at that concurrency, Engram's over the bare's.
 */
export interface CapacityVsBare {
  rpsRatio: number | null;
  engramAddedP99: number;
  bareAddedP99: number;
  addedP99Ratio: number | null;
}

export function capacityVsBare(direct: ClosedLoop, bare: ClosedLoop, engram: ClosedLoop): CapacityVsBare {
  const engramAddedP99 = engram.latency.p99 - direct.latency.p99;
  const bareAddedP99 = bare.latency.p99 - direct.latency.p99;
  return { rpsRatio: ratioTo(engram.rps, bare.rps), engramAddedP99, bareAddedP99, addedP99Ratio: ratioTo(engramAddedP99, bareAddedP99) };
}

/** The same against the Portkey gateway under the same load, with the added p50 under load too. */
export interface CapacityVsGateway {
  rpsRatio: number | null;
  engramAddedP50: number;
  gatewayAddedP50: number;
  addedP50Ratio: number | null;
  engramAddedP99: number;
  gatewayAddedP99: number;
  addedP99Ratio: number | null;
}

export function capacityVsGateway(direct: ClosedLoop, gateway: ClosedLoop, engram: ClosedLoop): CapacityVsGateway {
  const added = (x: ClosedLoop, p: 'p50' | 'p99') => x.latency[p] - direct.latency[p];
  const [engramAddedP50, gatewayAddedP50, engramAddedP99, gatewayAddedP99] = [added(engram, 'p50'), added(gateway, 'p50'), added(engram, 'p99'), added(gateway, 'p99')];
  return {
    rpsRatio: ratioTo(engram.rps, gateway.rps),
    engramAddedP50,
    gatewayAddedP50,
    addedP50Ratio: ratioTo(engramAddedP50, gatewayAddedP50),
    engramAddedP99,
    gatewayAddedP99,
    addedP99Ratio: ratioTo(engramAddedP99, gatewayAddedP99),
  };
}

/** Closed-loop throughput at `concurrency`, 4 KB chat completions, after a warm-up. */
export async function capacity(
  bench: Bench,
  options: { concurrency: number; warmupMs: number; durationMs: number; firstN: number },
): Promise<CapacityResult> {
  const template = bodyTemplate('chat', 4096, ASKS);
  const make = (n: number) => template.body(n);
  const direct = client(bench.direct, options.concurrency);
  const bare = bench.bare ? client(bench.bare, options.concurrency) : undefined;
  const gateway = bench.gateway ? client(bench.gateway, options.concurrency) : undefined;
  const engram = client(bench.engram, options.concurrency);
  try {
    await closedLoop(engram, 'chat', make, options.concurrency, options.warmupMs, options.firstN);
    if (bare) await closedLoop(bare, 'chat', make, options.concurrency, options.warmupMs / 2, options.firstN);
    if (gateway) await closedLoop(gateway, 'chat', make, options.concurrency, options.warmupMs / 2, options.firstN);
    await closedLoop(direct, 'chat', make, options.concurrency, options.warmupMs / 2, options.firstN);
    const d = await closedLoop(direct, 'chat', make, options.concurrency, options.durationMs, options.firstN + 1_000_000);
    const b = bare && (await closedLoop(bare, 'chat', make, options.concurrency, options.durationMs, options.firstN + 3_000_000));
    const g = gateway && (await closedLoop(gateway, 'chat', make, options.concurrency, options.durationMs, options.firstN + 4_000_000));
    const e = await closedLoop(engram, 'chat', make, options.concurrency, options.durationMs, options.firstN + 2_000_000);
    return {
      concurrency: options.concurrency,
      direct: d,
      engram: e,
      ...(b ? { bare: b, vsBare: capacityVsBare(d, b, e) } : {}),
      ...(g ? { gateway: g, vsGateway: capacityVsGateway(d, g, e) } : {}),
    };
  } finally {
    await Promise.all([direct.close(), engram.close(), bare?.close(), gateway?.close()]);
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
