/**
 * One agent's vectors as one contiguous float32 matrix, so a query is one brute-force
 * pass of dot products (vectors are unit length: dot product = cosine). The matrix
 * lives in WebAssembly memory and the pass runs as SIMD (simd-dot.ts): 10,000 x 256
 * takes about a millisecond, exact, with no approximate index to tune or rebuild.
 */
import { TopCandidates } from './top-candidates.js';
import type { Candidate } from './candidates.js';
import { compileDotsModule, instantiateDots, SIMD_LANES_PER_TURN, type DotsFunction } from '../../memory/embedders/simd-dot.js';

export const KIND_CODES = { factual: 0, procedural: 1 } as const;
export type KindCode = (typeof KIND_CODES)[keyof typeof KIND_CODES];

export interface VectorRow {
  seq: number;
  kind: string;
  vector: Uint8Array;
}

/** Compiled once; immutable. Undefined where WebAssembly SIMD is missing (scalar fallback). */
const DOTS_MODULE = compileDotsModule();
const PAGE_BYTES = 65_536;

export class VectorMatrix {
  /** Rows in use; rows up to `capacity` can be added in place. */
  count: number;
  readonly capacity: number;
  /** Floats per row: the longest vector rounded up for SIMD; shorter rows are zero-padded. */
  readonly stride: number;
  readonly seqs: Float64Array;
  readonly kinds: Uint8Array;
  /** Real dimension of each row: rows of another embedder's size never match a query. */
  readonly dims: Uint32Array;
  readonly rowOfSeq = new Map<number, number>();
  /** Row-major matrix (capacity rows), then one query row, then one score per row. */
  readonly #data: Float32Array;
  readonly #bytes: Uint8Array;
  readonly #query: Float32Array;
  readonly #scores: Float32Array;
  readonly #dots: DotsFunction | undefined;

  /**
   * `spare` rows are reserved so small writes patch the matrix instead of rebuilding it.
   * `simd: false` forces the scalar fallback (tests compare the two).
   */
  constructor(rows: readonly VectorRow[], spare = 64 + (rows.length >> 3), simd = true) {
    let longest = 0;
    for (const row of rows) longest = Math.max(longest, row.vector.byteLength >> 2);
    this.count = 0;
    this.capacity = rows.length + spare;
    this.stride = Math.max(SIMD_LANES_PER_TURN, Math.ceil(longest / SIMD_LANES_PER_TURN) * SIMD_LANES_PER_TURN);
    const matrixFloats = this.capacity * this.stride;
    const totalBytes = (matrixFloats + this.stride + this.capacity) * 4;
    let buffer: ArrayBuffer;
    if (DOTS_MODULE && simd) {
      const memory = new WebAssembly.Memory({ initial: Math.max(1, Math.ceil(totalBytes / PAGE_BYTES)) });
      this.#dots = instantiateDots(DOTS_MODULE, memory);
      buffer = memory.buffer;
    } else {
      buffer = new ArrayBuffer(totalBytes);
    }
    this.#data = new Float32Array(buffer, 0, matrixFloats);
    this.#bytes = new Uint8Array(buffer, 0, matrixFloats * 4);
    this.#query = new Float32Array(buffer, matrixFloats * 4, this.stride);
    this.#scores = new Float32Array(buffer, (matrixFloats + this.stride) * 4, this.capacity);
    this.seqs = new Float64Array(this.capacity);
    this.kinds = new Uint8Array(this.capacity);
    this.dims = new Uint32Array(this.capacity);
    for (const row of rows) this.put(row.seq, row.kind, row.vector);
  }

  /**
   * Adds or replaces the row of `seq` (a missing vector keeps the stored one). False when
   * the matrix has no room for it (full, or a longer vector): build a new one.
   */
  put(seq: number, kind: string, vector: Uint8Array | undefined): boolean {
    let row = this.rowOfSeq.get(seq);
    if (row === undefined) {
      if (!vector || this.count === this.capacity) return false;
      row = this.count++;
      this.rowOfSeq.set(seq, row);
      this.seqs[row] = seq;
    }
    this.kinds[row] = kind === 'procedural' ? KIND_CODES.procedural : KIND_CODES.factual;
    if (vector) {
      const dim = vector.byteLength >> 2;
      if (dim > this.stride) return false;
      const start = row * this.stride * 4;
      // Blobs are little-endian float32, like typed arrays on every supported platform:
      // copying bytes avoids decoding each float and the alignment rules of Buffer views.
      this.#bytes.fill(0, start, start + this.stride * 4);
      this.#bytes.set(vector.subarray(0, dim * 4), start);
      this.dims[row] = dim;
    }
    return true;
  }

  /** Removes the row of `seq` by moving the last row into its place. */
  remove(seq: number): void {
    const row = this.rowOfSeq.get(seq);
    if (row === undefined) return;
    this.rowOfSeq.delete(seq);
    const last = --this.count;
    if (row !== last) {
      this.#data.copyWithin(row * this.stride, last * this.stride, (last + 1) * this.stride);
      this.seqs[row] = this.seqs[last];
      this.kinds[row] = this.kinds[last];
      this.dims[row] = this.dims[last];
      this.rowOfSeq.set(this.seqs[row], row);
    }
  }

  /** Cosine of the query and one row; 0 when their dimensions differ. */
  cosineAt(row: number, query: Float32Array): number {
    if (this.dims[row] !== query.length) return 0;
    const base = row * this.stride;
    let sum = 0;
    for (let j = 0; j < query.length; j++) sum += this.#data[base + j] * query[j];
    return sum;
  }

  /** The `limit` rows most similar to the query (optionally of one kind), best first. */
  top(query: Float32Array, limit: number, kind?: KindCode): Candidate[] {
    return this.#select(query, limit, kind)?.ordered() ?? [];
  }

  /** The same rows as `top`, in no particular order. */
  candidates(query: Float32Array, limit: number, kind?: KindCode): Candidate[] {
    return this.#select(query, limit, kind)?.unordered() ?? [];
  }

  #select(query: Float32Array, limit: number, kind: KindCode | undefined): TopCandidates | undefined {
    const dim = query.length;
    if (limit <= 0 || dim === 0 || dim > this.stride || this.count === 0) return undefined;
    const scores = this.#score(query);
    const { dims, kinds, seqs } = this;
    // Equal scores rank the lower (older) seq first, so the chosen rows never depend on
    // where a row sits in the matrix.
    const best = new TopCandidates(limit);
    for (let row = 0; row < this.count; row++) {
      if (dims[row] !== dim || (kind !== undefined && kinds[row] !== kind)) continue;
      best.offer(scores[row], seqs[row]);
    }
    return best;
  }

  /** Dot product of the query with every row (zero-padded to the stride). */
  #score(query: Float32Array): Float32Array {
    this.#query.fill(0);
    this.#query.set(query);
    if (this.#dots) {
      this.#dots(this.#data.byteOffset, this.count, this.stride * 4, this.#query.byteOffset, this.#scores.byteOffset);
      return this.#scores;
    }
    const data = this.#data;
    const q = this.#query;
    const stride = this.stride;
    for (let row = 0; row < this.count; row++) {
      const base = row * stride;
      let s0 = 0;
      let s1 = 0;
      for (let j = 0; j < stride; j += 2) {
        s0 += data[base + j] * q[j];
        s1 += data[base + j + 1] * q[j + 1];
      }
      this.#scores[row] = s0 + s1;
    }
    return this.#scores;
  }
}
