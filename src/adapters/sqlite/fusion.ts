/**
 * Relative score fusion, as Weaviate's `relativeScoreFusion`: each result list's scores
 * are min-max normalised to [0, 1] (all equal: 1), then combined as
 * `alpha * vector + (1 - alpha) * keyword`; a candidate absent from a list gets 0 there.
 */

export interface Candidate {
  /** Row key of the candidate (shared by both lists). */
  key: number;
  score: number;
}

export interface FusedCandidate {
  key: number;
  score: number;
  /** Normalised keyword score, 0 when the keyword list missed it. */
  keyword: number;
  /** Normalised vector score, 0 when the vector list missed it. */
  vector: number;
}

export function normalise(list: readonly Candidate[]): Map<number, number> {
  const out = new Map<number, number>();
  if (list.length === 0) return out;
  let min = Infinity;
  let max = -Infinity;
  for (const { score } of list) {
    if (score < min) min = score;
    if (score > max) max = score;
  }
  const range = max - min;
  for (const { key, score } of list) out.set(key, range > 0 ? (score - min) / range : 1);
  return out;
}

/** Best first; ties go to the higher vector score, then the lower key (older row). */
export function relativeScoreFusion(
  vector: readonly Candidate[],
  keyword: readonly Candidate[],
  alpha: number,
): FusedCandidate[] {
  const weight = Math.min(1, Math.max(0, Number.isFinite(alpha) ? alpha : 0.5));
  const vectorNorm = normalise(vector);
  const keywordNorm = normalise(keyword);
  const keys = new Set<number>([...vectorNorm.keys(), ...keywordNorm.keys()]);
  const fused: FusedCandidate[] = [];
  for (const key of keys) {
    const v = vectorNorm.get(key) ?? 0;
    const k = keywordNorm.get(key) ?? 0;
    fused.push({ key, score: weight * v + (1 - weight) * k, vector: v, keyword: k });
  }
  return fused.sort((a, b) => b.score - a.score || b.vector - a.vector || a.key - b.key);
}
