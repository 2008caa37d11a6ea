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

/**
 * The best `limit` (default: all) fused candidates, best first; ties go to the higher
 * vector score, then the lower key (older row).
 */
export function relativeScoreFusion(
  vector: readonly Candidate[],
  keyword: readonly Candidate[],
  alpha: number,
  limit = Infinity,
): FusedCandidate[] {
  if (limit <= 0) return [];
  const weight = Math.min(1, Math.max(0, Number.isFinite(alpha) ? alpha : 0.5));
  // Parallel arrays, one object per winner only: this runs on every search, over up to
  // twice the fusion window, to return a handful.
  const capacity = vector.length + keyword.length;
  const keys = new Float64Array(capacity);
  const vectorScores = new Float64Array(capacity);
  const keywordScores = new Float64Array(capacity);
  const indexOfKey = new Map<number, number>();
  let [min, range] = span(vector);
  for (let i = 0; i < vector.length; i++) {
    keys[i] = vector[i].key;
    vectorScores[i] = range > 0 ? (vector[i].score - min) / range : 1;
    indexOfKey.set(vector[i].key, i);
  }
  let size = vector.length;
  [min, range] = span(keyword);
  for (const { key, score } of keyword) {
    let i = indexOfKey.get(key);
    if (i === undefined) {
      i = size++;
      keys[i] = key;
    }
    keywordScores[i] = range > 0 ? (score - min) / range : 1;
  }
  const fused = new Float64Array(size);
  for (let i = 0; i < size; i++) fused[i] = weight * vectorScores[i] + (1 - weight) * keywordScores[i];
  const count = Math.min(limit, size);
  let ranked: ArrayLike<number>;
  if (count * 4 > size) {
    // Most of them: sort them all.
    ranked = Array.from({ length: size }, (_, i) => i).sort((a, b) =>
      before(a, b, fused, vectorScores, keys) ? -1 : before(b, a, fused, vectorScores, keys) ? 1 : 0,
    );
  } else {
    // A handful out of many (the usual search): insertion into a short ranked list.
    const best = new Int32Array(count);
    let kept = 0;
    for (let i = 0; i < size; i++) {
      if (kept === count && !before(i, best[count - 1], fused, vectorScores, keys)) continue;
      let at = kept < count ? kept++ : count - 1;
      while (at > 0 && before(i, best[at - 1], fused, vectorScores, keys)) {
        best[at] = best[at - 1];
        at--;
      }
      best[at] = i;
    }
    ranked = best;
  }
  const out = new Array<FusedCandidate>(count);
  for (let r = 0; r < count; r++) {
    const i = ranked[r];
    out[r] = { key: keys[i], score: fused[i], vector: vectorScores[i], keyword: keywordScores[i] };
  }
  return out;
}

/** True when candidate `a` ranks before candidate `b` (a function, not a closure: see top-candidates.ts). */
function before(a: number, b: number, fused: Float64Array, vector: Float64Array, keys: Float64Array): boolean {
  return fused[a] > fused[b] || (fused[a] === fused[b] && (vector[a] > vector[b] || (vector[a] === vector[b] && keys[a] < keys[b])));
}

/** Minimum and range of the scores. */
function span(list: readonly Candidate[]): [number, number] {
  let min = Infinity;
  let max = -Infinity;
  for (const { score } of list) {
    if (score < min) min = score;
    if (score > max) max = score;
  }
  return [min, max - min];
}
