/**
 * Finds an embedder's relevance rule (`RelevanceCalibration`: the cosine bar at the
 * default `minScore`, and how far a named term lowers it) on the calibration set
 * (`injection-set.ts`), with and without tags together (one rule serves both: a store
 * holds learnt reflections with tags and remembered ones without): the rule that injects
 * the needed reflection most often for requests that name what they need, then for
 * paraphrases, while at most 5% of unrelated requests get anything in either variant.
 * The blind set (`injection-set-pawpath.ts`) is never used here; `npm run eval` reports
 * it under the chosen rule.
 *
 *   node --import tsx bench/eval/calibrate.ts [hash|default] [--bonus B]
 *
 * `--bonus` fixes the named bonus and finds only the cosine bar (a product requirement
 * may fix it: see `semantic-embedder.ts`).
 */
import { loadWordVectors } from '../../src/adapters/embeddings/word-vectors-file.js';
import { CALIBRATED_MIN_SCORE } from '../../src/memory/retrieval.js';
import { createLocalEmbedder } from '../../src/memory/embedders/local-embedder.js';
import { createSemanticEmbedder } from '../../src/memory/embedders/semantic-embedder.js';
import { createSoftMatchReranker } from '../../src/memory/rerank.js';
import { pointAt, type JudgedRequest, type Rule } from './curve.js';
import { judgeSet, type InjectionOptions } from './injection.js';
import { CALIBRATION_SET } from './sets.js';

const BONUSES = Array.from({ length: 17 }, (_, i) => i * 0.025);
/** The most unrelated requests that may get anything. */
const MAX_UNRELATED = 0.05;
const TOP_K = 5;

export interface Calibrated {
  rule: Rule;
  direct: number;
  paraphrase: number;
  unrelated: number;
}

/**
 * The best rule for these judged variants (each a set's requests, with or without tags):
 * every named bonus from 0 to 0.4, each at the lowest cosine bar keeping unrelated
 * requests within the bound in every variant.
 */
export function calibrate(variants: ReadonlyArray<readonly JudgedRequest[]>, bonuses: readonly number[] = BONUSES): Calibrated {
  let best: Calibrated | undefined;
  for (const bonus of bonuses) {
    for (let cosine = 0.1; cosine <= 0.8001; cosine += 0.005) {
      const rule = { minCosine: round(cosine), namedBonus: round(bonus) };
      const points = variants.map((requests) => pointAt(requests, rule, CALIBRATED_MIN_SCORE, TOP_K));
      const unrelated = Math.max(...points.map((p) => p.unrelated));
      if (unrelated > MAX_UNRELATED) continue;
      const found = {
        rule,
        direct: mean(points.map((p) => p.direct)),
        paraphrase: mean(points.map((p) => p.paraphrase)),
        unrelated,
      };
      if (!best || found.direct - best.direct > 1e-9 || (Math.abs(found.direct - best.direct) < 1e-9 && found.paraphrase > best.paraphrase)) best = found;
      break; // A higher bar with this bonus only injects less.
    }
  }
  if (!best) throw new Error('no rule keeps unrelated requests within the bound');
  return best;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const which = process.argv[2] ?? 'default';
  const fixed = process.argv.indexOf('--bonus');
  const bonuses = fixed > 0 ? [Number(process.argv[fixed + 1])] : BONUSES;
  const words = which === 'hash' ? undefined : loadWordVectors();
  const embedder = words ? createSemanticEmbedder(words) : createLocalEmbedder();
  const options: InjectionOptions = words ? { reranker: createSoftMatchReranker(words), vocabulary: words } : {};
  const variants = [
    (await judgeSet(CALIBRATION_SET, embedder, options)).requests,
    (await judgeSet(CALIBRATION_SET, embedder, { ...options, tags: true })).requests,
  ];
  const found = calibrate(variants, bonuses);
  console.log(`${embedder.id}: ${JSON.stringify(found.rule)}`);
  console.log(`  requests naming what they need ${pct(found.direct)}, paraphrases ${pct(found.paraphrase)} (mean of without and with tags), unrelated at most ${pct(found.unrelated)}`);
  // Two folds: even and odd requests, so both halves hold every kind.
  for (const parity of [0, 1]) {
    const fold = (requests: readonly JudgedRequest[], p: number) => requests.filter((_, index) => index % 2 === p);
    const fitted = calibrate(variants.map((v) => fold(v, parity)), bonuses);
    const held = variants.map((v) => pointAt(fold(v, 1 - parity), fitted.rule, CALIBRATED_MIN_SCORE, TOP_K));
    console.log(
      `  fold ${parity}: fitted ${JSON.stringify(fitted.rule)}; held out ${held.map((p) => `${pct(p.direct)} direct / ${pct(p.paraphrase)} paraphrase / ${pct(p.unrelated)} unrelated`).join(', ')}`,
    );
  }
}

function mean(values: number[]): number {
  return values.reduce((sum, x) => sum + x, 0) / values.length;
}
function pct(x: number): string {
  return `${(x * 100).toFixed(1)}%`;
}
function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
