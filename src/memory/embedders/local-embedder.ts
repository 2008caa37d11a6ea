/**
 * The default embedder (DESIGN section 8): no model, no download, no network. Feature
 * hashing ("the hashing trick") of word unigrams, word bigrams and character 3-5-grams of
 * words into 256 signed dimensions, with sublinear term frequency and L2 normalisation.
 *
 * Words carry topic; bigrams carry phrases ("deploy script"); character n-grams carry
 * morphology and identifiers ("deploy" ~ "deployment", "deploy.sh"), so related sentences
 * share mass even when their words differ in form. Signed hashing makes collisions cancel
 * on average instead of adding up, which keeps unrelated texts near zero cosine.
 *
 * It runs on the proxy's hot path for every request's query, so it works on char codes
 * and one Map per text, with no string building per n-gram.
 */
import type { Embedder } from '../ports.js';
import { STOPWORDS, tail } from '../../domain/text.js';

export const LOCAL_EMBEDDER_ID = 'local-hash-v1-256';
const DIMENSIONS = 256;
/** Only the end of a long text is embedded: in a query the latest words matter most. */
const MAX_CHARS = 4000;

const WEIGHT_WORD = 1;
const WEIGHT_BIGRAM = 0.6;
/** A six-letter word yields 15 n-grams; at 0.25 each they weigh about as much as the word. */
const WEIGHT_CHAR = 0.25;

// Seeds keep the three feature families apart in hash space.
const SEED_WORD = 0x811c9dc5;
const SEED_BIGRAM = 0x01000193;
const SEED_CHAR = 0x5bd1e995;

const FNV_PRIME = 16777619;
const TOKEN = /[\p{L}\p{N}]+/gu;

/** The embedder used when no embeddings endpoint is configured. */
export function createLocalEmbedder(): Embedder {
  return {
    id: LOCAL_EMBEDDER_ID,
    dimensions: DIMENSIONS,
    embed: async (texts) => texts.map(embedText),
  };
}

/**
 * The unit vector of one text, synchronously. A text without any content word (empty,
 * punctuation, only stopwords) yields the zero vector, whose cosine with anything is 0.
 */
export function embedText(text: string): Float32Array {
  const words = contentWords(tail(text, MAX_CHARS));
  const wordCounts = new Map<number, number>();
  const bigramCounts = new Map<number, number>();
  const charCounts = new Map<number, number>();

  let previous = 0;
  for (let i = 0; i < words.length; i++) {
    const word = words[i];
    const stemmed = stem(word);
    const wordHash = hashString(SEED_WORD, stemmed);
    count(wordCounts, wordHash);
    if (i > 0) count(bigramCounts, mix(Math.imul(previous ^ SEED_BIGRAM, FNV_PRIME) ^ wordHash));
    previous = wordHash;
    countCharGrams(charCounts, word);
  }

  const vector = new Float32Array(DIMENSIONS);
  addFeatures(vector, wordCounts, WEIGHT_WORD);
  addFeatures(vector, bigramCounts, WEIGHT_BIGRAM);
  addFeatures(vector, charCounts, WEIGHT_CHAR);
  return normalise(vector);
}

/** Lowercased words minus stopwords; camelCase and snake_case identifiers also yield their parts. */
function contentWords(text: string): string[] {
  const out: string[] = [];
  for (const match of text.matchAll(TOKEN)) {
    const raw = match[0];
    if (/\p{Ll}\p{Lu}/u.test(raw)) {
      for (const part of raw.split(/(?<=\p{Ll})(?=\p{Lu})/u)) pushWord(out, part.toLowerCase());
    }
    pushWord(out, raw.toLowerCase());
  }
  return out;
}

function pushWord(out: string[], word: string): void {
  if (word.length < 2 && !/\d/.test(word)) return;
  if (STOPWORDS.has(word)) return;
  out.push(word);
}

/**
 * A light suffix stripper (far simpler than Porter): enough for "deploys", "deploying",
 * "deployed" and "configured" / "configure" to meet. Character n-grams cover the rest.
 */
export function stem(word: string): string {
  let w = word;
  if (w.length <= 3 || /\d/.test(w)) return w;
  if (w.endsWith('ies') && w.length > 4) w = w.slice(0, -3) + 'y';
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('ing') && w.length > 5) w = w.slice(0, -3);
  else if (w.endsWith('ed') && w.length > 4) w = w.slice(0, -2);
  else if (w.endsWith('s') && !/(?:ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.length > 4 && w.endsWith('e')) w = w.slice(0, -1);
  // "running" -> "runn" -> "run"; but keep "install", "process", "jazz".
  if (w.length > 3 && w[w.length - 1] === w[w.length - 2] && !/[lsz]/.test(w[w.length - 1])) w = w.slice(0, -1);
  return w;
}

/** The 3-, 4- and 5-grams of `<word>`, one rolling FNV-1a per start position. */
function countCharGrams(counts: Map<number, number>, word: string): void {
  const length = word.length + 2;
  const codeAt = (i: number) => (i === 0 ? 0x3c : i === length - 1 ? 0x3e : word.charCodeAt(i - 1));
  for (let start = 0; start + 3 <= length; start++) {
    let h = SEED_CHAR;
    const end = Math.min(start + 5, length);
    for (let i = start; i < end; i++) {
      h = Math.imul(h ^ codeAt(i), FNV_PRIME);
      if (i - start >= 2) count(counts, mix(h));
    }
  }
}

function count(counts: Map<number, number>, key: number): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

/** Sublinear tf: a word said five times is not five times as important. */
function addFeatures(vector: Float32Array, counts: Map<number, number>, weight: number): void {
  for (const [hash, n] of counts) {
    const value = weight * (1 + Math.log(n));
    vector[hash & (DIMENSIONS - 1)] += hash < 0 ? -value : value;
  }
}

/** FNV-1a 32 over UTF-16 code units, finished by `mix`. */
function hashString(seed: number, text: string): number {
  let h = seed;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME);
  return mix(h);
}

/** Murmur3's finaliser: FNV's low bits are weak, and both the index and the sign come from them. Signed 32-bit result. */
function mix(value: number): number {
  let h = value;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h | 0;
}

function normalise(vector: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i] * vector[i];
  if (sum === 0) return vector;
  const scale = 1 / Math.sqrt(sum);
  for (let i = 0; i < vector.length; i++) vector[i] *= scale;
  return vector;
}

/** Dot product; equals cosine similarity for unit vectors. */
export function cosine(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) sum += a[i] * b[i];
  return sum;
}
