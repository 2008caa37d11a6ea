/**
 * What injection does with judged candidates under a relevance rule, emulated exactly so
 * one judging pass per request serves every `minScore` and every calibration: a
 * candidate's relevance (`Judged.relevance`, the `minScore` scale) is its cosine plus `namedBonus` times its
 * named term's strength, minus (`minCosine` − `CALIBRATED_MIN_SCORE`), as in
 * `memory/retrieval.ts`; the injected ones are those at or above `minScore`, best first,
 * at most `topK`. Pure: no store, no embedder.
 */
import { CALIBRATED_MIN_SCORE } from '../../src/memory/retrieval.js';
import type { RelevanceCalibration } from '../../src/ports/index.js';

export type Rule = Pick<RelevanceCalibration, 'minCosine' | 'namedBonus'>;

export interface Candidate {
  /** The reflection's id in the set. */
  id: string;
  kind: 'factual' | 'procedural';
  cosine: number;
  /** What multiplies the named bonus: its named term's strength, halved when uncorroborated (0: none). */
  named: number;
  term?: string;
}

export interface JudgedRequest {
  text: string;
  /** The reflection the request needs (the one it merged into, if the writer merged it); absent when unrelated. */
  needs?: string;
  /** `direct` / `paraphrase` for a needing request, the unrelated kind otherwise. */
  group: string;
  candidates: Candidate[];
}

export function relevanceOf(candidate: Candidate, rule: Rule): number {
  return candidate.cosine + rule.namedBonus * candidate.named - (rule.minCosine - CALIBRATED_MIN_SCORE);
}

/** The ids injection takes under `rule` at `minScore`, best first. */
export function injectedAt(request: JudgedRequest, rule: Rule, minScore: number, topK: number): string[] {
  return request.candidates
    .map((candidate) => ({ candidate, relevance: relevanceOf(candidate, rule) }))
    .filter(({ relevance }) => relevance >= minScore)
    .sort((a, b) => b.relevance - a.relevance || procedural(a.candidate) - procedural(b.candidate) || (a.candidate.id < b.candidate.id ? -1 : 1))
    .slice(0, topK)
    .map(({ candidate }) => candidate.id);
}

const procedural = (candidate: Candidate) => (candidate.kind === 'procedural' ? 0 : 1);

export interface Point {
  /** The agent's `minScore` for this point. */
  minScore: number;
  /** Share of needing requests of each phrasing that got their reflection. */
  direct: number;
  paraphrase: number;
  /** Share of unrelated requests that got any reflection. */
  unrelated: number;
}

export function pointAt(requests: readonly JudgedRequest[], rule: Rule, minScore: number, topK: number): Point {
  const share = (group: (r: JudgedRequest) => boolean, hit: (r: JudgedRequest, got: string[]) => boolean) => {
    const chosen = requests.filter(group);
    return chosen.length === 0 ? 0 : chosen.filter((r) => hit(r, injectedAt(r, rule, minScore, topK))).length / chosen.length;
  };
  return {
    minScore,
    direct: share((r) => r.group === 'direct', (r, got) => got.includes(r.needs!)),
    paraphrase: share((r) => r.group === 'paraphrase', (r, got) => got.includes(r.needs!)),
    unrelated: share((r) => r.needs === undefined, (_r, got) => got.length > 0),
  };
}

/**
 * The curve: for each share of unrelated requests allowed, the lowest `minScore` that
 * keeps them within it (the best relevance an unrelated request reaches, just above), and
 * what the needing requests get there.
 */
export function curve(requests: readonly JudgedRequest[], rule: Rule, topK: number, shares: readonly number[] = [0.02, 0.05, 0.1]): Point[] {
  const best = requests
    .filter((r) => r.needs === undefined)
    .map((r) => Math.max(-Infinity, ...r.candidates.map((c) => relevanceOf(c, rule))))
    .sort((a, b) => b - a);
  return shares.map((share) => {
    const allowed = Math.floor(share * best.length);
    const bar = allowed < best.length && Number.isFinite(best[allowed]) ? best[allowed] + 1e-6 : -Infinity;
    return pointAt(requests, rule, Number.isFinite(bar) ? Math.ceil(bar * 1e4) / 1e4 : bar, topK);
  });
}
