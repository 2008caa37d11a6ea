/**
 * `npm run eval`: memory quality, offline, for each local embedder Engram can run with:
 *   - `local-hash`: the hashing embedder alone (what runs when the word vectors are missing);
 *   - `local-default`: what `serve` runs without an embeddings endpoint, the semantic
 *     embedder with the soft-match reranker over the same word vectors.
 * For each: LoCoMo retrieval (R@5, R@10 through `recall`, as the MCP tool runs it) when
 * the dev set is found, and injection (`injection.ts`) twice: the reflections stored
 * without tags (as `remember` stores them) and with the tags extraction writes. Prints a
 * summary table; the whole result (per category, misses, false positives) goes to
 * `bench/results/eval-*.json`.
 * `npm run eval -- --candidates <file>` also writes the injection's per-request raw
 * candidates (score, vectorScore, keywordScore) for each embedder to `<file>`, to
 * calibrate `isRelevant` with `calibrate.ts`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadWordVectors, readWordVectorsFromPackage as readWordVectors } from '../../src/adapters/embeddings/word-vectors-file.js';
import { createLocalEmbedder } from '../../src/memory/embedders/local-embedder.js';
import { createSemanticEmbedder } from '../../src/memory/embedders/semantic-embedder.js';
import { createSoftMatchReranker, type Reranker } from '../../src/memory/rerank.js';
import type { Embedder } from '../../src/ports/index.js';
import { evalInjection, type RequestCandidates } from './injection.js';
import { evalLocomo, locomoFile } from './locomo.js';
import { benchReembed } from './reembed.js';

const flag = process.argv.indexOf('--candidates');
const candidatesFile = flag >= 0 ? process.argv[flag + 1] : undefined;
if (flag >= 0 && !candidatesFile) {
  console.error('usage: npm run eval -- [--candidates <file>]');
  process.exit(2);
}

interface Setup {
  name: string;
  embedder: Embedder;
  reranker?: Reranker;
}

const setups: Setup[] = [{ name: 'local-hash', embedder: createLocalEmbedder() }];
const skipped: string[] = [];
try {
  const words = loadWordVectors();
  setups.push({ name: 'local-default', embedder: createSemanticEmbedder(words), reranker: createSoftMatchReranker(words) });
} catch (error) {
  skipped.push(`local-default: word vectors could not be loaded (${error instanceof Error ? error.message : String(error)})`);
}
const file = locomoFile();
// The injection set is in the repository: it still runs without the LoCoMo download.
if (!file) skipped.push('LoCoMo: dev set not found, set ENGRAM_EVAL_LOCOMO to locomo-dev.json');

const seconds = (since: number) => Math.round((performance.now() - since) / 100) / 10;
const runs: object[] = [];
const candidates: Record<string, RequestCandidates[]> = {};
for (const { name, embedder, reranker } of setups) {
  let started = performance.now();
  const locomo = file ? { ...(await evalLocomo(embedder, file, { reranker })), seconds: seconds(started) } : undefined;
  started = performance.now();
  const { candidates: raw, ...injection } = await evalInjection(embedder, { reranker });
  candidates[name] = raw;
  const injectionSeconds = seconds(started);
  started = performance.now();
  const { candidates: rawTagged, ...injectionTagged } = await evalInjection(embedder, { reranker, tags: true });
  candidates[`${name}+tags`] = rawTagged;
  runs.push({
    name,
    embedder: embedder.id,
    reranker: reranker !== undefined,
    locomo,
    injection: { ...injection, seconds: injectionSeconds },
    injectionTagged: { ...injectionTagged, seconds: seconds(started) },
  });
}
if (candidatesFile) writeFileSync(candidatesFile, `${JSON.stringify(candidates, null, 2)}\n`);

// The default embedder's costs: reading the word vectors (once per process, at start-up),
// what they hold in memory, and re-embedding 10,000 reflections when the embedder changes.
const costs: Record<string, unknown> = {};
{
  const rssBefore = process.memoryUsage().rss;
  const started = performance.now();
  const fresh = readWordVectors();
  costs.wordVectorsLoadMs = Math.round(performance.now() - started);
  costs.wordVectorsRssMb = Math.round((process.memoryUsage().rss - rssBefore) / 2 ** 20);
  costs.words = fresh.size;
  const semantic = setups.find((setup) => setup.name === 'local-default');
  if (semantic) costs.reembed10k = await benchReembed(createLocalEmbedder(), semantic.embedder);
}

const results = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'results', `eval-${new Date().toISOString().replaceAll(':', '-')}.json`);
mkdirSync(path.dirname(results), { recursive: true });
writeFileSync(results, `${JSON.stringify({ runs, costs, ...(skipped.length > 0 && { skipped }) }, null, 2)}\n`);
interface Injection {
  neededHit: number;
  neededTop1: number;
  unrelatedAny: number;
}
const pct = (x: number | undefined) => (x === undefined ? '-' : `${(x * 100).toFixed(1)}%`);
console.table(
  Object.fromEntries(
    (runs as Array<{ name: string; embedder: string; locomo?: { r5: number; r10: number }; injection: Injection; injectionTagged: Injection }>).map((run) => [
      run.name,
      {
        embedder: run.embedder,
        'LoCoMo R@5 (>= 78%)': pct(run.locomo?.r5),
        'LoCoMo R@10 (>= 85%)': pct(run.locomo?.r10),
        'needed injected (>= 90%)': `${pct(run.injection.neededHit)} / ${pct(run.injectionTagged.neededHit)}`,
        'needed first': `${pct(run.injection.neededTop1)} / ${pct(run.injectionTagged.neededTop1)}`,
        'unrelated got any (<= 5%)': `${pct(run.injection.unrelatedAny)} / ${pct(run.injectionTagged.unrelatedAny)}`,
      },
    ]),
  ),
);
console.log('injection: reflections without tags (stored on purpose) / with the tags extraction writes');
console.log('costs of the default embedder:', JSON.stringify(costs));
for (const line of skipped) console.log(`skipped: ${line}`);
console.log(`details: ${path.relative(process.cwd(), results)}`);
