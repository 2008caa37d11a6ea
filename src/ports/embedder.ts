/**
 * When a reflection is related enough to a request to be injected unasked, for this
 * embedder's cosines (each embedder has its own scale: unrelated texts reach 0.2 with
 * hashed words, 0.45 with averaged word vectors). Calibrated on the injection evaluation
 * (`bench/eval/injection-set.ts`): the rule that injects the needed reflection most
 * often while at most 5% of unrelated requests get any.
 */
export interface RelevanceCalibration {
  /** Related by meaning: a cosine at or above this. */
  minCosine: number;
  /**
   * Or an exact keyword match in the upper half of the results whose cosine reaches this
   * fraction of `minCosine` (an identifier the vectors underrate).
   */
  keywordFraction: number;
}

export interface Embedder {
  /** Recorded on each vector; a change of embedder triggers re-embedding. */
  readonly id: string;
  readonly dimensions: number;
  /** Absent: the agent's `minScore` alone decides (an embeddings endpoint, uncalibrated). */
  readonly relevance?: RelevanceCalibration;
  /** Unit-length vectors, one per text. */
  embed(texts: string[]): Promise<Float32Array[]>;
}
