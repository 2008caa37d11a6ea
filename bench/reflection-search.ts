/**
 * Micro-benchmarks of the SQLite adapters' calls on the proxy's hot path, which runs on
 * every proxied request: hybrid search over `SqliteReflectionStore` (`nearest` + `keywords`, fused) (one agent, 256-dimension
 * vectors, realistic free-text queries) at 1,000 and 10,000 reflections, `markUsed`,
 * `SqliteEventBus.publish` (small and 48 KB payloads, with and without a consumer
 * subscribed) and conversation `get`/`put`. Budgets: search p50 <= 0.15 ms at 1,000 and
 * p95 <= 5 ms at 10,000. Run: `node --import tsx bench/reflection-search.ts`
 * (`BENCH_ONLY=search` or `BENCH_ONLY=hot` runs one half).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { SqliteConversationStore } from '../src/adapters/sqlite/conversations.js';
import { hybridSearch } from '../src/memory/hybrid-search.js';
import { openDatabase, type SqliteDatabase } from '../src/adapters/sqlite/database.js';
import { SqliteEventBus } from '../src/adapters/sqlite/event-bus.js';
import { SqliteReflectionStore } from '../src/adapters/sqlite/reflection-store.js';
import type { ConversationState } from '../src/domain/conversation-state.js';
import type { StoredReflection } from '../src/ports/index.js';
import { round, summarise, type Summary } from './stats.js';
import { prng } from './workload.js';

export interface SearchBenchResult {
  reflections: number;
  dims: number;
  queries: number;
  /** First search: builds the in-memory snapshot (vectors, keyword index, rows). */
  coldMs: number;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
  /**
   * CPU time (all threads) per search over the timed loop: unlike wall time, it does not
   * count time the process waited for a core, so it is steadier on a busy machine.
   */
  cpuMeanMs: number;
  /** p95 of a search right after an upsert to the same agent (the snapshot is patched, not rebuilt). */
  afterWriteP95Ms: number;
}

export interface SearchBenchOptions {
  reflections?: number;
  dims?: number;
  queries?: number;
  /** Other agents' rows in the same file. */
  otherAgentsReflections?: number;
}

const COMMON = 'the a to of and in is for on with use when run before after it this that be we our'.split(' ');

/** Reflections and queries drawn from a Zipf-like vocabulary, deterministic per seed. */
function corpus(dims: number, seed = 42) {
  const random = prng(seed);
  // A few very common words (matching thousands of rows, the expensive case for BM25)
  // and a long tail.
  const vocabulary = Array.from({ length: 5000 }, (_, i) => `w${i.toString(36)}`);
  const word = (): string =>
    random() < 0.3 ? COMMON[Math.floor(random() * COMMON.length)] : vocabulary[Math.floor(vocabulary.length * random() ** 2)];
  const sentence = (n: number): string => Array.from({ length: n }, word).join(' ');
  const unit = (): Float32Array => {
    const v = new Float32Array(dims);
    let norm = 0;
    for (let i = 0; i < dims; i++) {
      v[i] = random() * 2 - 1;
      norm += v[i] * v[i];
    }
    norm = Math.sqrt(norm);
    for (let i = 0; i < dims; i++) v[i] /= norm;
    return v;
  };
  const reflection = (agentId: string, i: number): StoredReflection => ({
    id: `r${i}`,
    agentId,
    kind: i % 4 === 0 ? 'procedural' : 'factual',
    content: sentence(12 + Math.floor(random() * 30)),
    topic: sentence(2),
    tags: [word(), word()],
    source: 'conversation',
    createdAt: i,
    updatedAt: i,
    lastUsedAt: null,
    useCount: 0,
    embedderId: 'bench',
    vector: unit(),
  });
  const query = () => ({ text: sentence(4 + Math.floor(random() * 20)), vector: unit(), limit: 5 });
  return { random, reflection, query };
}

async function fill(store: SqliteReflectionStore, make: (agentId: string, i: number) => StoredReflection, agentId: string, count: number): Promise<void> {
  for (let start = 0; start < count; start += 1000) {
    await store.upsert(Array.from({ length: Math.min(1000, count - start) }, (_, k) => make(agentId, start + k)));
  }
}

function withTempDb<T>(run: (db: SqliteDatabase) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(path.join(tmpdir(), 'engram-bench-'));
  const db = openDatabase(path.join(dir, 'bench.db'));
  return run(db).finally(() => {
    if (db.open) db.close();
    rmSync(dir, { recursive: true, force: true });
  });
}

const at = (list: number[], p: number): number => {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
};

export async function benchReflectionSearch(options: SearchBenchOptions = {}): Promise<SearchBenchResult> {
  const count = options.reflections ?? 10_000;
  const dims = options.dims ?? 256;
  const queries = options.queries ?? 500;
  const { reflection, query } = corpus(dims);
  return withTempDb(async (db) => {
    const store = new SqliteReflectionStore(db);
    await fill(store, reflection, 'agt_bench', count);
    const others = options.otherAgentsReflections ?? 0;
    for (let start = 0; start < others; start += 1000) {
      await store.upsert(
        Array.from({ length: Math.min(1000, others - start) }, (_, k) => reflection(`agt_other${(start + k) % 10}`, start + k)),
      );
    }

    let started = performance.now();
    await hybridSearch(store, 'agt_bench', query());
    const coldMs = performance.now() - started;
    for (let i = 0; i < 200; i++) await hybridSearch(store, 'agt_bench', query());

    const times: number[] = [];
    const prepared = Array.from({ length: queries }, query);
    const cpu = process.cpuUsage();
    for (const q of prepared) {
      started = performance.now();
      await hybridSearch(store, 'agt_bench', q);
      times.push(performance.now() - started);
    }
    const { user, system } = process.cpuUsage(cpu);
    const afterWrite: number[] = [];
    for (let i = 0; i < 50; i++) {
      await store.upsert([reflection('agt_bench', count + i)]);
      const q = query();
      started = performance.now();
      await hybridSearch(store, 'agt_bench', q);
      afterWrite.push(performance.now() - started);
    }
    await store.close();
    return {
      reflections: count,
      dims,
      queries,
      coldMs,
      p50Ms: at(times, 0.5),
      p95Ms: at(times, 0.95),
      maxMs: at(times, 1),
      cpuMeanMs: (user + system) / 1000 / queries,
      afterWriteP95Ms: at(afterWrite, 0.95),
    };
  });
}

export interface HotPathResult {
  /** Per call, on the caller's path (5 ids, 1,000 reflections). */
  markUsed: Summary;
  /** Wall time of all the calls plus `close()` (which flushes), per call. */
  markUsedAmortisedMs: number;
  publishSmall: Summary;
  publishLarge: Summary;
  /** Wall time per publish (small, due in 30 s) with a consumer subscribed, each followed by a turn of the event loop. */
  publishWithConsumerMs: number;
  /** The same without a consumer: the difference is what waking the consumer costs. */
  publishWithoutConsumerMs: number;
  getConversation: Summary;
  putConversation: Summary;
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export async function benchHotPath(): Promise<HotPathResult> {
  const markUsed = await withTempDb(async (db) => {
    const { random, reflection } = corpus(256, 7);
    const store = new SqliteReflectionStore(db);
    await fill(store, reflection, 'agt_bench', 1000);
    const ids = (): string[] => Array.from({ length: 5 }, () => `r${Math.floor(random() * 1000)}`);
    for (let i = 0; i < 200; i++) await store.markUsed('agt_bench', ids(), Date.now());
    const times: number[] = [];
    const started = performance.now();
    for (let i = 0; i < 5000; i++) {
      const list = ids();
      const t = performance.now();
      await store.markUsed('agt_bench', list, Date.now());
      times.push(performance.now() - t);
      if (i % 50 === 0) await turn();
    }
    await store.close();
    return { summary: summarise(times), amortised: (performance.now() - started) / times.length };
  });

  const bus = await withTempDb(async (db) => {
    const bus = new SqliteEventBus(db);
    const small = (i: number) => ({ agentId: 'agt_bench', conversationId: `conv_${i}`, turn: i, finalAt: Date.now() });
    const large = { agentId: 'agt_bench', conversationId: 'conv_large', transcript: 'x'.repeat(48 * 1024 - 100) };
    const time = async (n: number, publish: (i: number) => Promise<void>): Promise<number[]> => {
      const times: number[] = [];
      for (let i = 0; i < n; i++) {
        const t = performance.now();
        await publish(i);
        times.push(performance.now() - t);
      }
      return times;
    };
    const later = () => ({ notBefore: Date.now() + 30_000 });
    await time(200, (i) => bus.publish('warm', small(i), later()));
    const publishSmall = summarise(await time(3000, (i) => bus.publish('small', small(i), { ...later(), msgId: `s${i}` })));
    const publishLarge = summarise(await time(500, (i) => bus.publish('large', { ...large, i }, { ...later(), msgId: `l${i}` })));
    const loop = async (subject: string, n: number): Promise<number> => {
      const started = performance.now();
      for (let i = 0; i < n; i++) {
        await bus.publish(subject, small(i), later());
        await turn();
      }
      return (performance.now() - started) / n;
    };
    const publishWithoutConsumerMs = await loop('idle', 2000);
    const sub = bus.consume('busy', async (message) => {
      await message.ack();
    });
    await turn();
    const publishWithConsumerMs = await loop('busy', 2000);
    await sub.stop();
    await bus.close();
    return { publishSmall, publishLarge, publishWithConsumerMs, publishWithoutConsumerMs };
  });

  const conversations = await withTempDb(async (db) => {
    const store = new SqliteConversationStore(db);
    const state = (i: number): ConversationState => ({
      agentId: 'agt_bench',
      id: `conv_${i % 500}`,
      protocol: 'messages',
      insertions: Array.from({ length: 2 }, (_, k) => ({
        index: k * 2,
        messageHash: randomBytes(16).toString('hex'),
        block: '<engram-memory>\n' + '- a remembered fact about the project. '.repeat(12) + '\n</engram-memory>',
      })),
      injectedIds: Array.from({ length: 10 }, (_, k) => `ref_${k}${i}`),
      extractedTurns: i,
      lastActivityAt: Date.now(),
      lastFinalAt: Date.now(),
      seenMessages: 2 * i,
      createdAt: 1,
    });
    for (let i = 0; i < 500; i++) await store.put(state(i), undefined);
    const gets: number[] = [];
    const puts: number[] = [];
    for (let i = 0; i < 10_000; i++) {
      let t = performance.now();
      const found = await store.get('agt_bench', `conv_${i % 500}`);
      gets.push(performance.now() - t);
      if (!found) throw new Error('conversation missing');
      const next = state(i);
      t = performance.now();
      await store.put(next, found.revision);
      puts.push(performance.now() - t);
    }
    await store.close();
    return { getConversation: summarise(gets), putConversation: summarise(puts) };
  });

  return {
    markUsed: markUsed.summary,
    markUsedAmortisedMs: markUsed.amortised,
    ...bus,
    ...conversations,
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const only = process.env.BENCH_ONLY;
  const ms = (x: number): string => `${round(x, 3)} ms`;
  const line = (name: string, s: Summary): string =>
    `${name.padEnd(18)} p50 ${ms(s.p50)}, p95 ${ms(s.p95)}, p99 ${ms(s.p99)}, mean ${ms(s.mean)}, max ${ms(s.max)}`;
  if (only !== 'hot') {
    for (const reflections of [1_000, 10_000]) {
      const result = await benchReflectionSearch({
        reflections,
        otherAgentsReflections: Number(process.env.BENCH_OTHER_ROWS ?? 0),
      });
      console.log(
        `search over ${result.reflections} reflections x ${result.dims} dims, ${result.queries} queries: ` +
          `p50 ${ms(result.p50Ms)}, p95 ${ms(result.p95Ms)}, max ${ms(result.maxMs)}, CPU ${ms(result.cpuMeanMs)} per search, ` +
          `after a write p95 ${ms(result.afterWriteP95Ms)}, cold (first search builds the snapshot) ${ms(result.coldMs)}`,
      );
    }
  }
  if (only !== 'search') {
    const hot = await benchHotPath();
    console.log(line('markUsed', hot.markUsed) + `; amortised with the flush ${ms(hot.markUsedAmortisedMs)}`);
    console.log(line('publish (small)', hot.publishSmall));
    console.log(line('publish (48 KB)', hot.publishLarge));
    console.log(
      `publish + a loop turn: ${ms(hot.publishWithConsumerMs)} with a consumer subscribed, ` +
        `${ms(hot.publishWithoutConsumerMs)} without`,
    );
    console.log(line('getConversation', hot.getConversation));
    console.log(line('putConversation', hot.putConversation));
  }
}
