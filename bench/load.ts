/**
 * The load generator: undici pools (keep-alive) against a target, which is either the
 * upstream called directly or the same upstream through Engram. Bounded loops only.
 */
import { Pool } from 'undici';
import { summarise, type Summary } from './stats.js';
import type { Protocol } from './workload.js';

export interface Target {
  /**
   * `bare`: the bare Node proxy reference (bench/bare-proxy-process.ts); `gateway`: the
   * Portkey gateway reference (bench/gateway-process.ts).
   */
  name: 'direct' | 'bare' | 'gateway' | 'engram';
  origin: string;
  /** Path prefix before `/v1/...` (Engram's agent base path; '' for the upstream). */
  prefix: string;
  token: string;
  /** Headers sent with every request besides the protocol's (the gateway's routing headers). */
  headers?: Record<string, string>;
}

/** The scripted upstream called directly (its token is never checked). */
export function directTarget(upstream: { url: string }): Target {
  return { name: 'direct', origin: upstream.url, prefix: '', token: 'sk-bench-direct-0000000000000000' };
}

/** An Engram child's agent: its origin, the agent's base path and token. */
export function engramTarget(engram: { url: string; baseUrl: string; token: string }): Target {
  return { name: 'engram', origin: engram.url, prefix: new URL(engram.baseUrl).pathname, token: engram.token };
}

export type MakeBody = (n: number) => Buffer;

export interface Client {
  target: Target;
  pool: Pool;
  send(protocol: Protocol, body: Buffer): Promise<Sent>;
  stream(protocol: Protocol, body: Buffer): Promise<Streamed>;
  close(): Promise<void>;
}

export interface Sent {
  ms: number;
  status: number;
  /** `x-engram-injected`, or -1 when absent (direct calls). */
  injected: number;
}

export interface Streamed extends Sent {
  /** Time to the first body chunk. */
  ttfbMs: number;
  /** The stream reached its terminator (`[DONE]` or `message_stop`). */
  complete: boolean;
}

function headersFor(protocol: Protocol, target: Target): Record<string, string> {
  const own: Record<string, string> =
    protocol === 'messages'
      ? { 'content-type': 'application/json', 'x-api-key': target.token, 'anthropic-version': '2023-06-01' }
      : { 'content-type': 'application/json', authorization: `Bearer ${target.token}` };
  return target.headers ? { ...own, ...target.headers } : own;
}

const PATHS: Record<Protocol, string> = { chat: '/v1/chat/completions', messages: '/v1/messages', responses: '/v1/responses' };

/** How each protocol's stream ends: `[DONE]`, `message_stop`, Responses' `response.completed` event. */
const TERMINATORS = ['[DONE]', 'message_stop', 'event: response.completed'];

function injectedOf(headers: Record<string, string | string[] | undefined>): number {
  const value = headers['x-engram-injected'];
  return value === undefined ? -1 : Number(value);
}

export function client(target: Target, connections: number): Client {
  const pool = new Pool(target.origin, {
    connections,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    headersTimeout: 30_000,
    bodyTimeout: 30_000,
  });
  const headers: Record<Protocol, Record<string, string>> = {
    chat: headersFor('chat', target),
    messages: headersFor('messages', target),
    responses: headersFor('responses', target),
  };
  const request = (protocol: Protocol, body: Buffer) => pool.request({ path: target.prefix + PATHS[protocol], method: 'POST', headers: headers[protocol], body });
  return {
    target,
    pool,
    async send(protocol, body) {
      const started = performance.now();
      const response = await request(protocol, body);
      await response.body.arrayBuffer();
      return { ms: performance.now() - started, status: response.statusCode, injected: injectedOf(response.headers) };
    },
    async stream(protocol, body) {
      const started = performance.now();
      const response = await request(protocol, body);
      let ttfbMs = NaN;
      let last = '';
      let complete = false;
      for await (const chunk of response.body) {
        if (Number.isNaN(ttfbMs)) ttfbMs = performance.now() - started;
        // Searched chunk by chunk with a little of the previous one: the Responses
        // terminator opens a large event, so it is not near the end of the stream.
        const text = last + (chunk as Buffer).toString('utf8');
        complete ||= TERMINATORS.some((t) => text.includes(t));
        last = text.slice(-40);
      }
      return { ms: performance.now() - started, ttfbMs, status: response.statusCode, injected: injectedOf(response.headers), complete };
    },
    close: () => pool.close(),
  };
}

/**
 * Sequential requests to each client in turn, in blocks of `block`, alternating which
 * goes first, so drift (GC, CPU frequency, a growing database) hits both alike.
 */
export async function interleaved<R>(
  clients: Client[],
  total: number,
  block: number,
  run: (client: Client, n: number) => Promise<R>,
): Promise<Map<Client, R[]>> {
  const results = new Map<Client, R[]>(clients.map((c) => [c, []]));
  let n = 0;
  for (let done = 0, round = 0; done < total; round++) {
    const size = Math.min(block, total - done);
    const order = round % 2 === 0 ? clients : [...clients].reverse();
    for (const c of order) {
      for (let i = 0; i < size; i++) results.get(c)!.push(await run(c, n++));
    }
    done += size;
  }
  return results;
}

export interface ClosedLoop {
  requests: number;
  errors: number;
  seconds: number;
  rps: number;
  injectedShare: number;
  /** Each request's time, errors included. */
  latency: Summary;
  firstError?: string;
}

/** `concurrency` workers sending back to back for `durationMs`. */
export async function closedLoop(
  c: Client,
  protocol: Protocol,
  make: MakeBody,
  concurrency: number,
  durationMs: number,
  firstN = 0,
): Promise<ClosedLoop> {
  let n = firstN;
  let requests = 0;
  let errors = 0;
  let injected = 0;
  let firstError: string | undefined;
  const times: number[] = [];
  const started = performance.now();
  const deadline = started + durationMs;
  const worker = async () => {
    while (performance.now() < deadline) {
      const sentAt = performance.now();
      try {
        const sent = await c.send(protocol, make(n++));
        if (sent.status !== 200) {
          errors++;
          firstError ??= `HTTP ${sent.status}`;
        } else if (sent.injected > 0) injected++;
      } catch (error) {
        errors++;
        firstError ??= String(error);
      }
      times.push(performance.now() - sentAt);
      requests++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  return { requests, errors, seconds, rps: (requests - errors) / seconds, injectedShare: injected / Math.max(1, requests), latency: summarise(times), firstError };
}

export interface Held {
  streams: number;
  completed: number;
  errors: number;
  firstError?: string;
  ttfbMs: number[];
  durationMs: number[];
  wallMs: number;
}

/** Opens `count` streams over `rampMs` and waits for all of them to finish. */
export async function holdStreams(c: Client, protocol: Protocol, make: MakeBody, count: number, rampMs: number): Promise<Held> {
  const held: Held = { streams: count, completed: 0, errors: 0, ttfbMs: [], durationMs: [], wallMs: 0 };
  const started = performance.now();
  const batches = 20;
  const per = Math.ceil(count / batches);
  const all: Promise<void>[] = [];
  for (let b = 0; b < batches && b * per < count; b++) {
    for (let i = b * per; i < Math.min(count, (b + 1) * per); i++) {
      all.push(
        c.stream(protocol, make(i)).then(
          (s) => {
            if (s.status === 200 && s.complete) held.completed++;
            else {
              held.errors++;
              held.firstError ??= `HTTP ${s.status}, complete=${s.complete}`;
            }
            held.ttfbMs.push(s.ttfbMs);
            held.durationMs.push(s.ms);
          },
          (error) => {
            held.errors++;
            held.firstError ??= String(error);
          },
        ),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, rampMs / batches));
  }
  await Promise.all(all);
  held.wallMs = performance.now() - started;
  return held;
}
