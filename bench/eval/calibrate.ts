/**
 * `npm run eval -- --candidates F` writes every injection request's raw candidates; this
 * finds the relevance rule (`RelevanceCalibration`, the rule `isRelevant` applies) that
 * injects the needed reflection most often while at most 5% of unrelated requests get
 * any, for reflections with and without tags alike (one rule serves both: a store holds
 * learnt reflections with tags and remembered ones without).
 *
 *   node --import tsx bench/eval/calibrate.ts F [setup]     (setup: default local-default)
 *
 * Besides the best rule on the whole set, it reports a two-fold cross-validation: the
 * rule chosen on half of the requests, scored on the other half, so the figure the
 * embedder's comment quotes is not only a description of the set it was fitted on.
 */
import { readFileSync } from 'node:fs';
import { DEFAULT_MEMORY_SETTINGS } from '../../src/domain/types.js';
import { isRelevant } from '../../src/memory/retrieval.js';
import type { RelevanceCalibration } from '../../src/ports/index.js';
import type { RequestCandidates } from './injection.js';

const [file, setup = 'local-default'] = process.argv.slice(2);
if (!file) {
  console.error('usage: node --import tsx bench/eval/calibrate.ts <candidates.json> [setup]');
  process.exit(2);
}
const all = JSON.parse(readFileSync(file, 'utf8')) as Record<string, RequestCandidates[]>;
const sets = [all[setup], all[`${setup}+tags`]].filter((set): set is RequestCandidates[] => set !== undefined);
if (sets.length === 0) throw new Error(`no candidates for ${setup} in ${file}`);

/** The most unrelated requests that may get anything. */
const MAX_UNRELATED = 0.05;

/** What `retrieve` would inject under `rule`: the considered candidates `isRelevant` keeps, best first, at most topK. */
const injected = (request: RequestCandidates, rule: RelevanceCalibration) =>
  request.results
    .filter((c) => c.considered && isRelevant(c, rule))
    .slice(0, DEFAULT_MEMORY_SETTINGS.topK)
    .map((c) => c.id);

interface Score {
  /** Share of needing requests, over every set, that got the reflection they need. */
  hit: number;
  /** Share of unrelated requests that got anything, in the set where it is highest. */
  unrelated: number;
}

function score(sets: RequestCandidates[][], rule: RelevanceCalibration): Score {
  let hits = 0;
  let needing = 0;
  let unrelated = 0;
  for (const set of sets) {
    let any = 0;
    let count = 0;
    for (const request of set) {
      const got = injected(request, rule);
      if (request.needs) {
        needing++;
        if (got.includes(request.needs)) hits++;
      } else {
        count++;
        if (got.length > 0) any++;
      }
    }
    unrelated = Math.max(unrelated, any / Math.max(1, count));
  }
  return { hit: hits / Math.max(1, needing), unrelated };
}

const RULES: RelevanceCalibration[] = [];
for (let minCosine = 0.3; minCosine <= 0.8001; minCosine += 0.01) {
  for (const keywordFraction of [0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 1]) RULES.push({ minCosine: round(minCosine), keywordFraction });
}

/**
 * The rule with the most hits within the unrelated bound; of equals, the one giving
 * unrelated requests least, then the stricter (higher cosine, then higher fraction).
 */
function best(sets: RequestCandidates[][]): { rule: RelevanceCalibration; score: Score } {
  const better = (a: { rule: RelevanceCalibration; score: Score }, b: { rule: RelevanceCalibration; score: Score }) =>
    a.score.hit - b.score.hit || b.score.unrelated - a.score.unrelated || a.rule.minCosine - b.rule.minCosine || a.rule.keywordFraction - b.rule.keywordFraction;
  let found: { rule: RelevanceCalibration; score: Score } | undefined;
  for (const rule of RULES) {
    const candidate = { rule, score: score(sets, rule) };
    if (candidate.score.unrelated <= MAX_UNRELATED && (!found || better(candidate, found) > 0)) found = candidate;
  }
  if (!found) throw new Error('no rule keeps unrelated requests under the bound');
  return found;
}

const whole = best(sets);
console.log(`best on the whole set: ${JSON.stringify(whole.rule)}`);
for (const [index, set] of sets.entries()) {
  const result = score([set], whole.rule);
  console.log(`  ${index === 0 ? 'without tags' : 'with tags   '}: needed injected ${pct(result.hit)}, unrelated got any ${pct(result.unrelated)}`);
}

// Two folds: even and odd requests of each group, so both halves hold every kind.
const fold = (set: RequestCandidates[], parity: number) => set.filter((_, index) => index % 2 === parity);
for (const parity of [0, 1]) {
  const fitted = best(sets.map((set) => fold(set, parity)));
  const held = sets.map((set) => score([fold(set, 1 - parity)], fitted.rule));
  console.log(
    `fold ${parity}: fitted ${JSON.stringify(fitted.rule)}; held out ${held.map((r) => `${pct(r.hit)} needed / ${pct(r.unrelated)} unrelated`).join(', ')}`,
  );
}

function pct(x: number): string {
  return `${(x * 100).toFixed(1)}%`;
}
function round(x: number): number {
  return Math.round(x * 100) / 100;
}
