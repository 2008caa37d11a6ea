/**
 * The Responses section of the bench: `POST /v1/responses` added latency (the same
 * measures as chat completions/messages), time to the first event of each turn over
 * Engram's WebSocket mode, and 500 WebSocket connections at once.
 */
import { Pool } from 'undici';
import { firstByte, latency, type Bench, type LatencyResult, type Memory } from './phases.js';
import { round, summarise, type Summary } from './stats.js';
import { bodyTemplate, questions, responsesMessage } from './workload.js';
import { httpTurn, ResponsesSocket, type Turn } from './ws-load.js';

const ASKS = questions(500, 5);
const CHAIN_ASKS = questions(97, 11);
const MB = 2 ** 20;

export interface HttpFigures {
  body_bytes: number;
  n: number;
  direct_p50_ms: number;
  engram_p50_ms: number;
  added_p50_ms: number;
  direct_p99_ms: number;
  engram_p99_ms: number;
  added_p99_ms: number;
  errors: number;
  injected_share: number;
}

function httpFigures(r: LatencyResult): HttpFigures {
  return {
    body_bytes: r.bodyBytes,
    n: r.engram.n,
    direct_p50_ms: r.direct.p50,
    engram_p50_ms: r.engram.p50,
    added_p50_ms: r.addedP50,
    direct_p99_ms: r.direct.p99,
    engram_p99_ms: r.engram.p99,
    added_p99_ms: r.addedP99,
    errors: r.errors,
    injected_share: r.injectedShare,
  };
}

export interface ResponsesHttp {
  body_4k: HttpFigures;
  body_400k: HttpFigures;
  /** Streamed (`stream: true`), time to the first body byte. */
  stream_ttfb: HttpFigures & { incomplete: number };
}

/** The bench's sequential HTTP measures, with Responses bodies. */
export async function responsesHttp(
  bench: Bench,
  scale: (n: number) => number,
  firstN: number,
): Promise<ResponsesHttp> {
  const small = await latency(bench, 'responses', 4096, { warmup: scale(300), requests: scale(2000), block: 100, firstN });
  const large = await latency(bench, 'responses', 400 * 1024, { warmup: scale(30), requests: scale(300), block: 25, firstN: firstN + 1_000_000 });
  const ttfb = await firstByte(bench, { protocol: 'responses', warmup: scale(100), requests: scale(500), block: 50, firstN: firstN + 2_000_000 });
  return { body_4k: httpFigures(small), body_400k: httpFigures(large), stream_ttfb: { ...httpFigures(ttfb), incomplete: ttfb.incomplete } };
}

/** The first request of chain `n` (~`bytes`), as a parsed body without `stream`. */
function opening(template: ReturnType<typeof bodyTemplate>, n: number): Record<string, unknown> {
  const { stream: _stream, ...body } = JSON.parse(template.body(n).toString('utf8')) as Record<string, unknown>;
  return body;
}

const ask = (n: number, turn: number) => responsesMessage('user', `${CHAIN_ASKS[(n + turn) % CHAIN_ASKS.length]} (turn ${turn})`);

/**
 * A chain of `turns` over one Engram WebSocket: the first turn sends the whole opening
 * input, each later one `previous_response_id` and only its new user message.
 */
async function wsChain(socket: ResponsesSocket, opened: Record<string, unknown>, n: number, turns: number, store?: false): Promise<Turn[]> {
  const out: Turn[] = [];
  const extra = store === false ? { store: false } : {};
  let previous: string | undefined;
  for (let t = 0; t < turns; t++) {
    const frame = t === 0
      ? { ...opened, ...extra }
      : { model: opened.model, tools: opened.tools, previous_response_id: previous, input: [ask(n, t)], ...extra };
    const turn = await socket.turn(frame);
    out.push(turn);
    if (!turn.ok) break;
    previous = turn.responseId;
  }
  return out;
}

/**
 * The same chain against the upstream called directly over HTTP streaming: it keeps no
 * state, so each turn sends the whole history (what Engram expands a chained turn into).
 */
async function directChain(pool: Pool, bench: Bench, opened: Record<string, unknown>, n: number, turns: number): Promise<Turn[]> {
  const out: Turn[] = [];
  let input = opened.input as unknown[];
  for (let t = 0; t < turns; t++) {
    if (t > 0) input = [...input, ask(n, t)];
    const body = Buffer.from(JSON.stringify({ ...opened, input, stream: true }));
    const turn = await httpTurn(pool, bench.direct.prefix + '/v1/responses', bench.direct.token, body);
    out.push(turn);
    if (!turn.ok) break;
    input = [...input, ...turn.output];
  }
  return out;
}

export interface WsFirstEvent {
  chains: number;
  turns_per_chain: number;
  opening_bytes: number;
  /** Upstream called directly, HTTP streaming: time to the first body byte. */
  direct_http_ttfb: Summary;
  /** Through Engram over WebSocket: time from `response.create` to the first frame. */
  engram_ws_first_event: Summary;
  first_event_added_p50_ms: number;
  first_event_added_p99_ms: number;
  /** Turns 2.. only (chained by `previous_response_id`, Engram expanding the chain). */
  chained_added_p50_ms: number;
  errors: number;
  first_error?: string;
}

/**
 * Added time to the first event of each turn over WebSocket. The scripted upstream has no
 * WebSocket, so the baseline is its HTTP streaming time to first byte for the same body
 * (the whole history, as Engram sends it upstream): Engram's figure includes the
 * upstream's, and both raw figures are reported next to the difference. Chains run one
 * at a time, direct and Engram alternating, one WebSocket connection per chain (opened
 * before the clock starts); `store` is left to its default.
 */
export async function wsFirstEvent(bench: Bench, options: { chains: number; warmup: number; turns: number; block: number; firstN: number }): Promise<WsFirstEvent> {
  const template = bodyTemplate('responses', 4096, ASKS);
  const pool = new Pool(bench.direct.origin, { connections: 1, pipelining: 1, keepAliveTimeout: 60_000 });
  const url = `ws://${new URL(bench.engram.origin).host}${bench.engram.prefix}/v1/responses`;
  const runs = { direct: [] as Turn[][], engram: [] as Turn[][] };
  const engram = async (n: number) => {
    const socket = await ResponsesSocket.open(url, bench.engram.token);
    try {
      return await wsChain(socket, opening(template, n), n, options.turns);
    } finally {
      await socket.close();
    }
  };
  const direct = (n: number) => directChain(pool, bench, opening(template, n), n, options.turns);
  try {
    let n = options.firstN;
    for (let i = 0; i < options.warmup; i++) {
      await direct(n);
      await engram(n++);
    }
    for (let done = 0, round = 0; done < options.chains; round++) {
      const size = Math.min(options.block, options.chains - done);
      const order = round % 2 === 0 ? (['direct', 'engram'] as const) : (['engram', 'direct'] as const);
      for (const side of order) {
        for (let i = 0; i < size; i++) runs[side].push(await (side === 'direct' ? direct : engram)(n + i));
      }
      n += size;
      done += size;
    }
  } finally {
    await pool.close();
  }
  const ok = (chains: Turn[][], from = 0) => chains.flatMap((c) => c.slice(from)).filter((t) => t.ok).map((t) => t.firstEventMs);
  const d = summarise(ok(runs.direct));
  const e = summarise(ok(runs.engram));
  const failed = [...runs.direct, ...runs.engram].flat().filter((t) => !t.ok);
  return {
    chains: options.chains,
    turns_per_chain: options.turns,
    opening_bytes: template.bytes,
    direct_http_ttfb: d,
    engram_ws_first_event: e,
    first_event_added_p50_ms: e.p50 - d.p50,
    first_event_added_p99_ms: e.p99 - d.p99,
    chained_added_p50_ms: summarise(ok(runs.engram, 1)).p50 - summarise(ok(runs.direct, 1)).p50,
    errors: failed.length,
    first_error: failed[0]?.error,
  };
}

export interface WsConcurrent {
  connections: number;
  turns_per_connection: number;
  turns: number;
  turns_ok: number;
  /** Connections refused, and turns that did not end in `response.completed`. */
  errors: number;
  first_error?: string;
  connect_s: number;
  /** From the first connection attempt to the last turn's end. */
  total_s: number;
  /** Completed turns over the time from all connections open to the last turn's end. */
  turns_per_s: number;
  first_event: Summary;
  turn: Summary;
  rss_before_mb: number;
  rss_peak_mb: number;
  rss_after_mb: number;
  heap_peak_mb: number;
}

/**
 * `connections` WebSocket connections opened at once, then each runs a chain of `turns`
 * (`store: false`: the connection's own memory carries the chain) while all stay open;
 * Engram's memory sampled over IPC throughout.
 */
export async function wsConcurrent(bench: Bench, options: { connections: number; turns: number; firstN: number }): Promise<WsConcurrent> {
  const template = bodyTemplate('responses', 4096, ASKS);
  const url = `ws://${new URL(bench.engram.origin).host}${bench.engram.prefix}/v1/responses`;
  const errors: string[] = [];
  await bench.engramChild.call('resetPeak');
  const before = await bench.engramChild.call<Memory>('memory');
  let peak = { rss: before.rss, heap: before.heapUsed };
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const m = await bench.engramChild.call<Memory>('memory');
      peak = { rss: Math.max(peak.rss, m.peak), heap: Math.max(peak.heap, m.heapUsed) };
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  const started = performance.now();
  const attempts = await Promise.allSettled(Array.from({ length: options.connections }, () => ResponsesSocket.open(url, bench.engram.token)));
  const sockets = attempts.flatMap((a) => (a.status === 'fulfilled' ? [a.value] : (errors.push(`connect: ${String(a.reason)}`), [])));
  const connected = performance.now();
  const chains = await Promise.all(sockets.map((socket, i) => wsChain(socket, opening(template, options.firstN + i), options.firstN + i, options.turns, false)));
  const ended = performance.now();
  sampling = false;
  await sampler;
  const during = await bench.engramChild.call<Memory>('memory');
  await Promise.all(sockets.map((s) => s.close()));
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const after = await bench.engramChild.call<Memory>('memory');
  const turns = chains.flat();
  for (const t of turns) if (!t.ok) errors.push(t.error ?? 'failed');
  const ok = turns.filter((t) => t.ok);
  return {
    connections: options.connections,
    turns_per_connection: options.turns,
    turns: options.connections * options.turns,
    turns_ok: ok.length,
    // Turns never sent (their connection or an earlier turn failed) show in `turns_ok`.
    errors: errors.length,
    first_error: errors[0],
    connect_s: (connected - started) / 1000,
    total_s: (ended - started) / 1000,
    turns_per_s: ok.length / ((ended - connected) / 1000),
    first_event: summarise(ok.map((t) => t.firstEventMs)),
    turn: summarise(ok.map((t) => t.ms)),
    rss_before_mb: round(before.rss / MB, 1),
    rss_peak_mb: round(Math.max(peak.rss, during.peak, after.peak) / MB, 1),
    rss_after_mb: round(after.rss / MB, 1),
    heap_peak_mb: round(Math.max(peak.heap, during.heapUsed) / MB, 1),
  };
}

export interface ResponsesResults {
  http: ResponsesHttp;
  ws: WsFirstEvent & { concurrent500: WsConcurrent };
}
