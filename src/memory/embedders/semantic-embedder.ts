/**
 * The default embedder (DESIGN section 8), offline: the hashing embedder's 256
 * dimensions (shared words, phrases, identifiers) joined with 100 dimensions of meaning,
 * the smooth-inverse-frequency average of the text's pre-trained word vectors (Arora et
 * al. 2017), each half unit length and weighted, so the cosine of two vectors is the
 * weighted sum of the two cosines.
 */
import type { Embedder } from '../../ports/index.js';
import { STOPWORDS, words } from '../../domain/text.js';
import { embedText } from './local-embedder.js';
import type { WordVectors } from './word-vectors.js';

export const SEMANTIC_EMBEDDER_ID = 'local-semantic-v1-356';
const HASH_DIMENSIONS = 256;
/** Share of the cosine that comes from the hashed features; the rest from word vectors. */
const HASH_SHARE = 0.5;
/** Only the end of a long text is embedded, as by the hashing embedder. */
const MAX_CHARS = 4000;

export function createSemanticEmbedder(vectors: WordVectors): Embedder {
  const dimensions = HASH_DIMENSIONS + vectors.dims;
  const hashScale = Math.sqrt(HASH_SHARE);
  const meaningScale = Math.sqrt(1 - HASH_SHARE);
  return {
    id: SEMANTIC_EMBEDDER_ID,
    dimensions,
    // `bench/eval/calibrate.ts default --bonus 0.1` on the calibration set
    // (bench/eval/injection-set.ts, with and without tags): the bar that keeps unrelated
    // requests within 5%. The named bonus is fixed at 0.1 rather than the calibration's
    // 0.075 (same share of requests naming what they need, 2 points fewer paraphrases):
    // at 0.075 a one-line reflection naming a repository ("Use pnpm not npm in the quasar
    // repo") misses the requests that name the repository and little else. `npm run eval`
    // reports what the rule gives on both sets.
    relevance: { minCosine: 0.515, namedBonus: 0.1, keywordFraction: 0.9 },
    embed: async (texts) =>
      texts.map((text) => {
        const out = new Float32Array(dimensions);
        const hashed = embedText(text);
        for (let i = 0; i < HASH_DIMENSIONS; i++) out[i] = hashed[i] * hashScale;
        const meaning = meaningOf(vectors, text.length > MAX_CHARS ? text.slice(-MAX_CHARS) : text);
        if (meaning) for (let i = 0; i < vectors.dims; i++) out[HASH_DIMENSIONS + i] = meaning[i] * meaningScale;
        return unit(out);
      }),
  };
}

/** The unit SIF average of the text's content words, or undefined when none is known. */
export function meaningOf(vectors: WordVectors, text: string): Float32Array | undefined {
  const sum = new Float32Array(vectors.dims);
  let known = 0;
  for (const word of words(text)) {
    if (word.length < 2 || STOPWORDS.has(word)) continue;
    const row = vectors.row(word);
    if (row === undefined) continue;
    vectors.addTo(sum, row, vectors.weight(row));
    known++;
  }
  return known > 0 ? unit(sum) : undefined;
}

function unit(vector: Float32Array): Float32Array {
  let norm = 0;
  for (const x of vector) norm += x * x;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i] /= norm;
  return vector;
}
