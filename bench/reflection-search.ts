/**
 * Micro-benchmark of `SqliteReflectionStore.search`, the retrieval on every proxied
 * request: 10,000 reflections of one agent, 256-dimension vectors, realistic free-text
 * queries. Budget: p95 <= 10 ms. Run: `node --import tsx bench/reflection-search.ts`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { openDatabase } from '../src/adapters/sqlite/database.js';
import { SqliteReflectionStore } from '../src/adapters/sqlite/reflection-store.js';
import type { StoredReflection } from '../src/memory/ports.js';

export interface SearchBenchResult {
  reflections: number;
  dims: number;
  queries: number;
  /** First search: builds the in-memory vector matrix. */
  coldMs: number;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
  /** p95 of a search right after an upsert to the same agent (the snapshot is patched, not rebuilt). */
  afterWriteP95Ms: number;
}

export interface SearchBenchOptions {
  reflections?: number;
  dims?: number;
  queries?: number;
  /** Other agents' rows in the same file (they share the FTS index). */
  otherAgentsReflections?: number;
}

/** Deterministic PRNG so runs are comparable. */
function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const COMMON = 'the a to of and in is for on with use when run before after it this that be we our'.split(' ');

export async function benchReflectionSearch(options: SearchBenchOptions = {}): Promise<SearchBenchResult> {
  const count = options.reflections ?? 10_000;
  const dims = options.dims ?? 256;
  const queries = options.queries ?? 500;
  const random = mulberry32(42);
  // Zipf-like vocabulary: a few very common words (matching thousands of rows, the
  // expensive case for BM25) and a long tail.
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
  const make = (agentId: string, i: number): StoredReflection => ({
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

  const dir = mkdtempSync(path.join(tmpdir(), 'engram-bench-'));
  const db = openDatabase(path.join(dir, 'bench.db'));
  try {
    const store = new SqliteReflectionStore(db);
    for (let start = 0; start < count; start += 1000) {
      await store.upsert(Array.from({ length: Math.min(1000, count - start) }, (_, k) => make('agt_bench', start + k)));
    }
    const others = options.otherAgentsReflections ?? 0;
    for (let start = 0; start < others; start += 1000) {
      await store.upsert(
        Array.from({ length: Math.min(1000, others - start) }, (_, k) => make(`agt_other${(start + k) % 10}`, start + k)),
      );
    }

    const query = () => ({ text: sentence(4 + Math.floor(random() * 20)), vector: unit(), limit: 5 });
    let started = performance.now();
    await store.search('agt_bench', query());
    const coldMs = performance.now() - started;
    for (let i = 0; i < 50; i++) await store.search('agt_bench', query());

    const times: number[] = [];
    for (let i = 0; i < queries; i++) {
      const q = query();
      started = performance.now();
      await store.search('agt_bench', q);
      times.push(performance.now() - started);
    }
    const afterWrite: number[] = [];
    for (let i = 0; i < 50; i++) {
      await store.upsert([make('agt_bench', count + i)]);
      const q = query();
      started = performance.now();
      await store.search('agt_bench', q);
      afterWrite.push(performance.now() - started);
    }
    const at = (list: number[], p: number): number => {
      const sorted = [...list].sort((a, b) => a - b);
      return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
    };
    return {
      reflections: count,
      dims,
      queries,
      coldMs,
      p50Ms: at(times, 0.5),
      p95Ms: at(times, 0.95),
      maxMs: at(times, 1),
      afterWriteP95Ms: at(afterWrite, 0.95),
    };
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await benchReflectionSearch({ otherAgentsReflections: Number(process.env.BENCH_OTHER_ROWS ?? 0) });
  const round = (n: number): number => Math.round(n * 100) / 100;
  console.log(
    `search over ${result.reflections} reflections x ${result.dims} dims, ${result.queries} queries: ` +
      `p50 ${round(result.p50Ms)} ms, p95 ${round(result.p95Ms)} ms, max ${round(result.maxMs)} ms, ` +
      `after a write p95 ${round(result.afterWriteP95Ms)} ms, cold (first search builds the snapshot) ${round(result.coldMs)} ms`,
  );
}
