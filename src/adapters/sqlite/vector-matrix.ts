/**
 * One agent's vectors as one contiguous Float32Array, so a query is a tight brute-force
 * loop of dot products (vectors are unit length: dot product = cosine). 10,000 vectors
 * of 256 dimensions take ~10 MB and ~2 ms per query, well inside the retrieval budget,
 * without an approximate index that would need tuning and rebuilding.
 */
import type { Candidate } from './fusion.js';

export const KIND_CODES = { factual: 0, procedural: 1 } as const;
export type KindCode = (typeof KIND_CODES)[keyof typeof KIND_CODES];

export interface VectorRow {
  seq: number;
  kind: string;
  vector: Buffer;
}

export interface VectorMatrix {
  /** `reflection_versions.version` the matrix was built from. */
  readonly version: number;
  readonly count: number;
  /** Floats per row: the longest vector; shorter rows are zero-padded. */
  readonly stride: number;
  readonly data: Float32Array;
  readonly seqs: Float64Array;
  readonly kinds: Uint8Array;
  /** Real dimension of each row: rows of another embedder's size never match a query. */
  readonly dims: Uint32Array;
  readonly rowOfSeq: Map<number, number>;
}

export function buildMatrix(rows: readonly VectorRow[], version: number): VectorMatrix {
  let stride = 0;
  for (const row of rows) stride = Math.max(stride, row.vector.byteLength >> 2);
  const count = rows.length;
  const data = new Float32Array(count * stride);
  const bytes = new Uint8Array(data.buffer);
  const seqs = new Float64Array(count);
  const kinds = new Uint8Array(count);
  const dims = new Uint32Array(count);
  const rowOfSeq = new Map<number, number>();
  rows.forEach((row, i) => {
    const dim = row.vector.byteLength >> 2;
    // Blobs are little-endian float32, like the typed array on every supported platform:
    // copying bytes avoids decoding each float and the alignment rules of a Buffer view.
    bytes.set(row.vector.subarray(0, dim * 4), i * stride * 4);
    seqs[i] = row.seq;
    kinds[i] = row.kind === 'procedural' ? KIND_CODES.procedural : KIND_CODES.factual;
    dims[i] = dim;
    rowOfSeq.set(row.seq, i);
  });
  return { version, count, stride, data, seqs, kinds, dims, rowOfSeq };
}

/** Cosine of the query and one row; 0 when their dimensions differ. */
export function cosineAt(matrix: VectorMatrix, row: number, query: Float32Array): number {
  if (matrix.dims[row] !== query.length) return 0;
  const { data } = matrix;
  const base = row * matrix.stride;
  let sum = 0;
  for (let j = 0; j < query.length; j++) sum += data[base + j] * query[j];
  return sum;
}

/** The `limit` rows most similar to the query (optionally of one kind), best first. */
export function topByVector(
  matrix: VectorMatrix,
  query: Float32Array,
  limit: number,
  kind?: KindCode,
): Candidate[] {
  const dim = query.length;
  if (limit <= 0 || dim === 0 || dim > matrix.stride) return [];
  const { data, stride, dims, kinds } = matrix;
  // Bounded buffer kept sorted ascending: a row only enters when it beats the weakest.
  const bestScores = new Float64Array(limit);
  const bestRows = new Int32Array(limit);
  let size = 0;
  for (let row = 0; row < matrix.count; row++) {
    if (dims[row] !== dim || (kind !== undefined && kinds[row] !== kind)) continue;
    const base = row * stride;
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    let j = 0;
    for (; j + 3 < dim; j += 4) {
      s0 += data[base + j] * query[j];
      s1 += data[base + j + 1] * query[j + 1];
      s2 += data[base + j + 2] * query[j + 2];
      s3 += data[base + j + 3] * query[j + 3];
    }
    for (; j < dim; j++) s0 += data[base + j] * query[j];
    const score = s0 + s1 + s2 + s3;
    let i: number;
    if (size < limit) {
      i = size++;
      while (i > 0 && bestScores[i - 1] > score) {
        bestScores[i] = bestScores[i - 1];
        bestRows[i] = bestRows[i - 1];
        i--;
      }
    } else {
      if (score <= bestScores[0]) continue;
      // Full: the weakest (index 0) falls out, the others shift down until the slot fits.
      i = 0;
      while (i + 1 < size && bestScores[i + 1] < score) {
        bestScores[i] = bestScores[i + 1];
        bestRows[i] = bestRows[i + 1];
        i++;
      }
    }
    bestScores[i] = score;
    bestRows[i] = row;
  }
  const out: Candidate[] = [];
  for (let i = size - 1; i >= 0; i--) out.push({ key: matrix.seqs[bestRows[i]], score: bestScores[i] });
  return out;
}
