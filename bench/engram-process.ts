/**
 * Child process: Engram itself on its own event loop, with an agent whose store holds
 * `BENCH_REFLECTIONS` reflections (seeded through the ports, not by extraction). Also
 * runs the in-process measurements that need Engram's internals: retrieval over a
 * large agent, RSS, and a CPU profile of a phase.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Session } from 'node:inspector/promises';
import { findSourceMap, type SourceMapping } from 'node:module';
import { loadConfig } from '../src/config.js';
import { reflectionId } from '../src/memory/reflection-id.js';
import type { Agent } from '../src/domain/types.js';
import { start } from '../src/main.js';
import { EXTRACTION_SUBJECT } from '../src/memory/extraction.js';
import { TAGGING_SUBJECT } from '../src/memory/tagging-job.js';
import { createRetrieval } from '../src/memory/retrieval.js';
import type { StoredReflection } from '../src/ports/index.js';
import { rssSampler, serveParent } from './ipc.js';
import { summarise } from './stats.js';
import { questions, reflectionSeeds } from './workload.js';

export interface EngramHello {
  url: string;
  baseUrl: string;
  token: string;
  agentId: string;
  reflections: number;
  seedMs: number;
}

const ADMIN = 'egm_admin_AEFEABGCeJyRawfBuq8IsB7L_BK36I-H-NaI-OHZt7o';
const upstreamUrl = process.env.BENCH_UPSTREAM_URL;
if (!upstreamUrl) throw new Error('BENCH_UPSTREAM_URL is required');
const reflectionCount = Number(process.env.BENCH_REFLECTIONS ?? 1000);
/** With it, the event bus and the control stores run on NATS (JetStream, KV): the NATS-mode rows. */
const natsUrl = process.env.BENCH_NATS_URL;
/**
 * Quiet time before a conversation's turns are extracted. Ten minutes by default, so the
 * load phases measure the proxy alone; the extraction-cost phase sets it short.
 */
const settleMs = process.env.BENCH_SETTLE_MS ?? '600000';
/** How far apart an agent's tagging jobs are; the extraction-cost phase sets it short, so tagging runs within it. */
const taggingIntervalMs = process.env.BENCH_TAGGING_INTERVAL_MS ?? '300000';
const natsSettings = natsUrl ? { 'nats-url': natsUrl, 'nats-prefix': 'bench', 'secret-key': 'be'.repeat(32) } : {};

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-bench-'));
process.once('exit', () => fs.rmSync(dataDir, { recursive: true, force: true }));
const running = await start(
  loadConfig({ port: '0', host: '127.0.0.1', 'data-dir': dataDir, 'admin-token': ADMIN, 'settle-ms': settleMs, 'tagging-interval-ms': taggingIntervalMs, 'log-level': 'warn', ...natsSettings }, {}),
  { logger: false },
);
const { deps } = running;
const rss = rssSampler();

async function api(method: string, pathname: string, body?: unknown): Promise<any> {
  const response = await fetch(running.url + pathname, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await response.json();
  if (response.status >= 300) throw new Error(`${method} ${pathname}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

const org = await api('POST', '/v0/orgs', { name: 'bench' });

async function createAgent(name: string): Promise<{ agent: Agent; token: string; baseUrl: string }> {
  const created = await api('POST', `/v0/orgs/${org.id}/agents`, {
    name,
    type: 'api_provider',
    upstream: { base_url: upstreamUrl, api_key: 'sk-bench-upstream-0000000000000000' },
  });
  const agent = await deps.control.directory.getAgent(org.id, created.id);
  if (!agent) throw new Error('agent not found after creation');
  return { agent, token: created.token, baseUrl: created.base_url };
}

/** Writes `count` reflections for `agentId` straight through the store port. */
async function seed(agentId: string, count: number): Promise<number> {
  const started = performance.now();
  const seeds = reflectionSeeds(count);
  const now = Date.now();
  for (let at = 0; at < seeds.length; at += 500) {
    const batch = seeds.slice(at, at + 500);
    const vectors = await deps.embedder.embed(batch.map((s) => `${s.topic}\n${s.content}`));
    const rows: StoredReflection[] = batch.map((s, i) => ({
      id: reflectionId(agentId, s.kind, s.content),
      agentId,
      kind: s.kind,
      content: s.content,
      topic: s.topic,
      tags: s.tags,
      // Seeded as extraction would have stored them: tagged, so no tagging job is queued for them.
      ...(s.tags.length > 0 ? { tagsBy: 'extraction' as const } : {}),
      source: 'conversation',
      createdAt: now,
      updatedAt: now,
      lastUsedAt: null,
      useCount: 0,
      embedderId: deps.embedder.id,
      vector: vectors[i],
    }));
    await deps.reflections.upsert(rows);
  }
  return performance.now() - started;
}

const main = await createAgent('proxy');
const seedMs = await seed(main.agent.id, reflectionCount);
let profiler: Session | undefined;

serveParent(
  {
    memory: () => rss.memory(),
    /** Extraction and tagging jobs not yet done (waiting ones included), and their dead letters. */
    async extractionQueue() {
      const [pending, tagging, dead, deadTagging] = await Promise.all([
        deps.bus.pending(EXTRACTION_SUBJECT),
        deps.bus.pending(TAGGING_SUBJECT),
        deps.bus.deadLetters(EXTRACTION_SUBJECT),
        deps.bus.deadLetters(TAGGING_SUBJECT),
      ]);
      return { pending, taggingPending: tagging, deadLetters: dead.length + deadTagging.length };
    },
    resetPeak: () => rss.resetPeak(),
    /** p50/p95 of `retrieve()` alone, over an agent holding `reflections` reflections. */
    async retrieval({ reflections, iterations, warmup }: { reflections: number; iterations: number; warmup: number }) {
      const big = await createAgent('retrieval');
      const seedMillis = await seed(big.agent.id, reflections);
      const stored = await deps.reflections.count(big.agent.id);
      const retrieval = createRetrieval({ reflections: deps.reflections, embedder: deps.embedder, reranker: deps.reranker });
      const asks = questions(warmup + iterations, 7);
      let started = performance.now();
      await retrieval.retrieve(big.agent, asks[0], new Set());
      const coldMs = performance.now() - started;
      for (let i = 1; i < warmup; i++) await retrieval.retrieve(big.agent, asks[i], new Set());
      const times: number[] = [];
      let found = 0;
      for (let i = 0; i < iterations; i++) {
        started = performance.now();
        const result = await retrieval.retrieve(big.agent, asks[warmup + i], new Set());
        times.push(performance.now() - started);
        if (result.length > 0) found++;
      }
      return { stored, seedMs: seedMillis, coldMs, hitShare: found / iterations, ...summarise(times) };
    },
    async profileStart() {
      profiler = new Session();
      profiler.connect();
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.setSamplingInterval', { interval: 200 });
      await profiler.post('Profiler.start');
      return true;
    },
    async profileStop({ file }: { file: string }) {
      if (!profiler) throw new Error('no profile running');
      const { profile } = await profiler.post('Profiler.stop');
      profiler.disconnect();
      profiler = undefined;
      // tsx compiles each module to a few long lines: point frames at the TypeScript source.
      for (const { callFrame: frame } of profile.nodes) {
        const found = frame.url.startsWith('file:') ? findSourceMap(frame.url)?.findEntry(frame.lineNumber, frame.columnNumber) : undefined;
        // An unmapped position yields {}.
        const entry = found as Partial<SourceMapping> | undefined;
        if (entry?.originalLine !== undefined && entry.originalColumn !== undefined) {
          frame.lineNumber = entry.originalLine;
          frame.columnNumber = entry.originalColumn;
        }
      }
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, JSON.stringify(profile));
      return file;
    },
    async close() {
      await running.close();
      process.exit(0);
    },
  },
  { url: running.url, baseUrl: main.baseUrl, token: main.token, agentId: main.agent.id, reflections: reflectionCount, seedMs } satisfies EngramHello,
);
