/**
 * The best `limit` of a stream of (score, key) pairs, for the searches' top-k. Higher
 * scores rank first; equal scores rank the lower key (the older row) first, so results
 * never depend on storage order.
 *
 * Pairs at or above the running threshold are appended to a buffer of twice the limit;
 * a full buffer is cut back to the best `limit` by quickselect, which raises the
 * threshold. Most pairs thus cost one well-predicted comparison, where a bounded heap
 * pays several unpredictable ones per kept pair: a search takes the best 100 of every
 * reflection twice (vector and keyword lists), so this is on every request.
 *
 * No closures: tsx (keepNames) wraps every closure creation in a call, which costs more
 * than the selection itself on the hot path.
 */
import type { Candidate } from './candidates.js';

export class TopCandidates {
  readonly #limit: number;
  readonly #scores: Float64Array;
  readonly #keys: Float64Array;
  #size = 0;
  /** Score of the `limit`-th best pair kept so far; lower scores can never make it. */
  #threshold = -Infinity;

  constructor(limit: number) {
    this.#limit = Math.max(0, Math.floor(limit));
    this.#scores = new Float64Array(2 * this.#limit);
    this.#keys = new Float64Array(2 * this.#limit);
  }

  offer(score: number, key: number): void {
    if (score < this.#threshold || this.#limit === 0) return;
    this.#scores[this.#size] = score;
    this.#keys[this.#size] = key;
    if (++this.#size === this.#scores.length) this.#cut();
  }

  /** The best pairs in no particular order (for fusion, which orders by its own rules). */
  unordered(): Candidate[] {
    if (this.#size > this.#limit) this.#cut();
    const out = new Array<Candidate>(this.#size);
    for (let i = 0; i < this.#size; i++) out[i] = { key: this.#keys[i], score: this.#scores[i] };
    return out;
  }

  /** The best pairs, best first. */
  ordered(): Candidate[] {
    return this.unordered().sort((a, b) => b.score - a.score || a.key - b.key);
  }

  /** Keeps the best `limit` pairs at the front of the buffer and raises the threshold. */
  #cut(): void {
    const scores = this.#scores;
    const keys = this.#keys;
    const target = this.#limit - 1;
    let lo = 0;
    let hi = this.#size - 1;
    // Quickselect (Hoare partition around the middle pair): afterwards the pair at
    // `target` is the limit-th best and every pair before it ranks above it. Keys are
    // distinct, so no two pairs tie completely.
    while (lo < hi) {
      const middle = (lo + hi) >>> 1;
      const pivotScore = scores[middle];
      const pivotKey = keys[middle];
      let i = lo;
      let j = hi;
      while (i <= j) {
        while (scores[i] > pivotScore || (scores[i] === pivotScore && keys[i] < pivotKey)) i++;
        while (scores[j] < pivotScore || (scores[j] === pivotScore && keys[j] > pivotKey)) j--;
        if (i <= j) {
          const score = scores[i];
          scores[i] = scores[j];
          scores[j] = score;
          const key = keys[i];
          keys[i] = keys[j];
          keys[j] = key;
          i++;
          j--;
        }
      }
      if (target <= j) hi = j;
      else if (target >= i) lo = i;
      else break;
    }
    this.#size = this.#limit;
    this.#threshold = scores[target];
  }
}
