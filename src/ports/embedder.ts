export interface Embedder {
  /** Recorded on each vector; a change of embedder triggers re-embedding. */
  readonly id: string;
  readonly dimensions: number;
  /** Unit-length vectors, one per text. */
  embed(texts: string[]): Promise<Float32Array[]>;
}
