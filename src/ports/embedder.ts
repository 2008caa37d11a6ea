/**
 * When a reflection is related enough to a request to be injected unasked, for this
 * embedder's cosines (each embedder has its own scale: unrelated texts reach 0.2 with
 * hashed words, 0.45 with averaged word vectors). Calibrated on the injection evaluation
 * (`bench/eval/injection-set.ts`, by `bench/eval/calibrate.ts`): the rule that injects
 * the needed reflection most often while at most 5% of unrelated requests get any. An
 * agent's `minScore` moves the bar from there (`memory/retrieval.ts`).
 */
export interface RelevanceCalibration {
  /** Related by meaning: a cosine at or above this, at the agent's default `minScore`. */
  minCosine: number;
  /**
   * Added, times its strength (0..1), to the cosine of a reflection that names a term the
   * request names: how far a named term lowers the bar.
   */
  namedBonus: number;
  /** `recall` (asked for by the model) returns cosines from this fraction of the bar on. */
  keywordFraction: number;
}

export interface Embedder {
  /** Recorded on each vector; a change of embedder triggers re-embedding. */
  readonly id: string;
  readonly dimensions: number;
  /** Absent: the agent's `minScore` alone decides (an embeddings endpoint, uncalibrated). */
  readonly relevance?: RelevanceCalibration;
  /**
   * Unit-length vectors, one per text. Once `signal` aborts (the request that asked has
   * gone), work that waits stops (an endpoint's HTTP request is closed) and the promise
   * rejects with the signal's reason; work done in place may finish first.
   */
  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
}
