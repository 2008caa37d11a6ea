/**
 * `npm run eval`: memory quality, offline, for each local embedder Engram can run with:
 *   - `local-hash`: the hashing embedder alone (what runs when the word vectors are missing);
 *   - `local-default`: what `serve` runs without an embeddings endpoint, the semantic
 *     embedder with the soft-match reranker and named terms over the same word vectors.
 * For each: LoCoMo retrieval (R@5, R@10 through `recall`, as the MCP tool runs it) when
 * the dev set is found, and injection (`injection.ts`) on both sets (`sets.ts`: the
 * calibration set and the blind one), each with its reflections stored without tags (as
 * `remember` stores them, before the tagging job) and with the tags extraction writes:
 *   - at the default `minScore`: requests naming what they need (`direct`) and
 *     paraphrases that got their reflection, unrelated requests that got any;
 *   - the curve: the same at 2%, 5% and 10% of unrelated requests getting any, with the
 *     `minScore` giving each;
 *   - the `minScore` steps an agent can set, and what each gives.
 * Prints a summary; the whole result (misses, false positives) goes to
 * `bench/results/eval-*.json`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadWordVectors, readWordVectorsFromPackage as readWordVectors } from '../../src/adapters/embeddings/word-vectors-file.js';
import { DEFAULT_MEMORY_SETTINGS } from '../../src/domain/types.js';
import { createLocalEmbedder } from '../../src/memory/embedders/local-embedder.js';
import { createSemanticEmbedder } from '../../src/memory/embedders/semantic-embedder.js';
import { createSoftMatchReranker } from '../../src/memory/rerank.js';
import type { Embedder } from '../../src/ports/index.js';
import { curve, pointAt, type Point, type Rule } from './curve.js';
import { judgeSet, summarise, type InjectionOptions } from './injection.js';
import { evalLocomo, locomoFile } from './locomo.js';
import { benchReembed } from './reembed.js';
import { SETS } from './sets.js';

/** The `minScore` values the README documents. */
export const MIN_SCORE_STEPS = [0.1, 0.15, 0.2, 0.25, 0.3, 0.35];
const TOP_K = DEFAULT_MEMORY_SETTINGS.topK;

interface Setup {
  name: string;
  embedder: Embedder;
  options: InjectionOptions;
}

const setups: Setup[] = [{ name: 'local-hash', embedder: createLocalEmbedder(), options: {} }];
const skipped: string[] = [];
try {
  const words = loadWordVectors();
  setups.push({ name: 'local-default', embedder: createSemanticEmbedder(words), options: { reranker: createSoftMatchReranker(words), vocabulary: words } });
} catch (error) {
  skipped.push(`local-default: word vectors could not be loaded (${error instanceof Error ? error.message : String(error)})`);
}
const file = locomoFile();
if (!file) skipped.push('LoCoMo: dev set not found, set ENGRAM_EVAL_LOCOMO to locomo-dev.json');

const seconds = (since: number) => Math.round((performance.now() - since) / 100) / 10;
const runs: object[] = [];
const rows: Record<string, Record<string, string>> = {};
const curves: Record<string, Record<string, string>> = {};
for (const { name, embedder, options } of setups) {
  let started = performance.now();
  const locomo = file ? { ...(await evalLocomo(embedder, file, { reranker: options.reranker })), seconds: seconds(started) } : undefined;
  const rule: Rule = { minCosine: embedder.relevance!.minCosine, namedBonus: embedder.relevance!.namedBonus };
  const injection: object[] = [];
  for (const set of SETS) {
    for (const tags of [false, true]) {
      started = performance.now();
      const judged = await judgeSet(set, embedder, { ...options, tags });
      const summary = summarise(judged, rule, DEFAULT_MEMORY_SETTINGS.minScore, TOP_K);
      const points = curve(judged.requests, rule, TOP_K);
      const steps = MIN_SCORE_STEPS.map((minScore) => pointAt(judged.requests, rule, minScore, TOP_K));
      const { requests: _requests, ...rest } = judged;
      injection.push({ ...rest, summary, curve: points, steps, seconds: seconds(started) });
      const key = `${name} ${set.name}${tags ? ' +tags' : ''}`;
      rows[key] = {
        'direct (>= 97%)': pct(summary.direct),
        'paraphrase (>= 80% tagged)': pct(summary.paraphrase),
        'first': pct(summary.first),
        'unrelated (<= 5%)': pct(summary.unrelated),
        drift: String(judged.drift),
      };
      curves[key] = Object.fromEntries(points.map((p, i) => [`at ${['2', '5', '10'][i]}% unrelated`, shown(p)]));
    }
  }
  runs.push({ name, embedder: embedder.id, rule, locomo, injection });
  if (locomo) rows[`${name} LoCoMo`] = { 'R@5 (>= 78%)': pct(locomo.r5), 'R@10 (>= 85%)': pct(locomo.r10) };
}

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
console.log(`At the default min_score (${DEFAULT_MEMORY_SETTINGS.minScore}); tidewater calibrates the rule, pawpath was written blind:`);
console.table(rows);
console.log('The curve: needed reflection injected for direct / paraphrase requests when at most 2%, 5%, 10% of unrelated ones get any (min_score there):');
console.table(curves);
console.log('costs of the default embedder:', JSON.stringify(costs));
for (const line of skipped) console.log(`skipped: ${line}`);
console.log(`details: ${path.relative(process.cwd(), results)}`);

function pct(x: number | undefined): string {
  return x === undefined ? '-' : `${(x * 100).toFixed(1)}%`;
}
function shown(point: Point): string {
  return `${pct(point.direct)} / ${pct(point.paraphrase)} (${point.minScore.toFixed(3)})`;
}
