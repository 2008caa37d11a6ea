/**
 * `recall` over MCP (Streamable HTTP) with 10,000 reflections in the agent: the issue's
 * target is p95 <= 15 ms end to end. A second Engram child (bench/engram-process.ts with
 * `BENCH_REFLECTIONS`) holds one agent seeded through the store port, as for the proxy's
 * agent, so the agent holds nothing else and the process serves nothing else. One MCP SDK
 * client session calls `recall` sequentially with varied queries after a warm-up; each
 * call is timed on the client: the POST, Engram's SSE answer, and the SDK's parsing and
 * output-schema check.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { EngramHello } from './engram-process.js';
import { startChild } from './ipc.js';
import { summarise } from './stats.js';
import { prng, questions, reflectionSeeds } from './workload.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));

export interface McpRecallResult {
  /** Reflections in the agent. */
  reflections: number;
  seed_ms: number;
  /** `initialize` and `tools/list` of the session. */
  connect_ms: number;
  /** The first call of the session, before the warm-up. */
  cold_ms: number;
  warmup: number;
  /** Measured calls that succeeded. */
  n: number;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  max_ms: number;
  mean_ms: number;
  /** Calls that threw or answered `isError`. */
  errors: number;
  first_error?: string;
  /** Share of measured calls with at least one result. */
  hit_share: number;
}

/**
 * What an agent would ask its memory: whole questions about a service (two in three) and
 * short keyword queries naming a service and a topic, some with a larger `limit`.
 */
export function recallQueries(count: number, seed = 13): Array<{ query: string; limit?: number }> {
  const asks = questions(count, seed);
  const topics = [...new Set(reflectionSeeds(500).map((s) => s.topic))];
  const random = prng(seed + 1);
  return asks.map((ask, i) => {
    if (i % 3 !== 2) return { query: ask };
    const query = topics[Math.floor(random() * topics.length)];
    return i % 2 === 0 ? { query } : { query, limit: 10 };
  });
}

export async function mcpRecall(
  upstreamUrl: string,
  options: { reflections: number; calls: number; warmup: number },
): Promise<McpRecallResult> {
  const engram = await startChild<EngramHello>(path.join(HERE, 'engram-process.ts'), {
    env: { BENCH_UPSTREAM_URL: upstreamUrl, BENCH_REFLECTIONS: String(options.reflections) },
  });
  const client = new Client({ name: 'engram-bench', version: '1.0.0' });
  try {
    const { baseUrl, token } = engram.hello;
    let started = performance.now();
    await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/v0/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    const { tools } = await client.listTools();
    if (!tools.some((tool) => tool.name === 'recall')) throw new Error(`no recall tool: ${tools.map((tool) => tool.name).join(', ')}`);
    const connectMs = performance.now() - started;

    const queries = recallQueries(1 + options.warmup + options.calls);
    const call = (i: number) => client.callTool({ name: 'recall', arguments: queries[i] });
    started = performance.now();
    await call(0);
    const coldMs = performance.now() - started;
    for (let i = 1; i <= options.warmup; i++) await call(i);

    const times: number[] = [];
    let errors = 0;
    let hits = 0;
    let firstError: string | undefined;
    for (let i = 1 + options.warmup; i < queries.length; i++) {
      started = performance.now();
      try {
        const result = await call(i);
        const ms = performance.now() - started;
        if (result.isError) throw new Error(JSON.stringify(result.content));
        times.push(ms);
        if (((result.structuredContent as { results?: unknown[] } | undefined)?.results?.length ?? 0) > 0) hits++;
      } catch (error) {
        errors++;
        firstError ??= error instanceof Error ? error.message : String(error);
      }
    }
    const summary = summarise(times);
    return {
      reflections: engram.hello.reflections,
      seed_ms: engram.hello.seedMs,
      connect_ms: connectMs,
      cold_ms: coldMs,
      warmup: options.warmup,
      n: summary.n,
      p50_ms: summary.p50,
      p95_ms: summary.p95,
      p99_ms: summary.p99,
      max_ms: summary.max,
      mean_ms: summary.mean,
      errors,
      ...(firstError ? { first_error: firstError } : {}),
      hit_share: hits / Math.max(1, options.calls),
    };
  } finally {
    await client.close().catch(() => undefined);
    await engram.stop();
  }
}
