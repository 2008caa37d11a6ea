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
 * It runs on the proxy's hot path for every request's query, so it scans char codes (a
 * regex only for characters outside ASCII), builds no string per n-gram and counts into
 * typed-array tables reused across calls. Its output is bit for bit that of the first,
 * Map-based version: vectors stored under `LOCAL_EMBEDDER_ID` stay comparable.
 */
import type { Embedder } from '../../ports/index.js';
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

/** The embedder used when no embeddings endpoint is configured. */
export function createLocalEmbedder(): Embedder {
  return {
    id: LOCAL_EMBEDDER_ID,
    dimensions: DIMENSIONS,
    // bench/eval/calibrate.ts on the calibration set (bench/eval/injection-set.ts, with and
    // without tags): the bar that keeps unrelated requests within 5%. Without word vectors
    // only an identifier's shape or a capital tells a name, hence the small bonus.
    relevance: { minCosine: 0.26, namedBonus: 0.025, keywordFraction: 1 },
    embed: async (texts) => texts.map(embedText),
  };
}

/**
 * The unit vector of one text, synchronously. A text without any content word (empty,
 * punctuation, only stopwords) yields the zero vector, whose cosine with anything is 0.
 */
export function embedText(text: string): Float32Array {
  const features = FEATURES;
  features.reset();
  forEachWord(tail(text, MAX_CHARS), features);
  const vector = new Float32Array(DIMENSIONS);
  features.words.addTo(vector, WEIGHT_WORD);
  features.bigrams.addTo(vector, WEIGHT_BIGRAM);
  features.chars.addTo(vector, WEIGHT_CHAR);
  return normalise(vector);
}

/**
 * Counts of 32-bit feature hashes, kept in first-seen order: the order features are added
 * to the vector in, which fixes its float rounding (as a `Map` per text did, slower).
 * Open addressing over typed arrays; a stamp per slot empties the table in O(1).
 */
class HashCounts {
  private keys = new Int32Array(1024);
  private counts = new Int32Array(1024);
  private stamps = new Uint32Array(1024);
  /** Slots in first-seen order. */
  private order = new Int32Array(1024);
  private size = 0;
  private stamp = 1;

  reset(): void {
    this.size = 0;
    if (++this.stamp === 0xffffffff) {
      this.stamps.fill(0);
      this.stamp = 1;
    }
  }

  add(key: number): void {
    const mask = this.keys.length - 1;
    // Keys come out of `mix`, so their low bits are already well spread.
    for (let slot = key & mask; ; slot = (slot + 1) & mask) {
      if (this.stamps[slot] !== this.stamp) {
        this.stamps[slot] = this.stamp;
        this.keys[slot] = key;
        this.counts[slot] = 1;
        this.order[this.size++] = slot;
        if (this.size * 2 > this.keys.length) this.grow();
        return;
      }
      if (this.keys[slot] === key) {
        this.counts[slot]++;
        return;
      }
    }
  }

  /** Sublinear tf: a word said five times is not five times as important. */
  addTo(vector: Float32Array, weight: number): void {
    for (let i = 0; i < this.size; i++) {
      const slot = this.order[i];
      const hash = this.keys[slot];
      const n = this.counts[slot];
      const value = weight * (n < TF.length ? TF[n] : 1 + Math.log(n));
      vector[hash & (DIMENSIONS - 1)] += hash < 0 ? -value : value;
    }
  }

  private grow(): void {
    const { keys, counts, order, size } = this;
    const capacity = keys.length * 2;
    this.keys = new Int32Array(capacity);
    this.counts = new Int32Array(capacity);
    this.stamps = new Uint32Array(capacity);
    this.order = new Int32Array(capacity);
    this.size = 0;
    for (let i = 0; i < size; i++) {
      this.add(keys[order[i]]);
      this.counts[this.order[i]] = counts[order[i]];
    }
  }
}

/** The three feature families of one text, and the word before the current one. */
class Features {
  readonly words = new HashCounts();
  readonly bigrams = new HashCounts();
  readonly chars = new HashCounts();
  private previous: number | undefined;
  /** The char codes of `<word>`, for its n-grams. */
  private codes = new Int32Array(64);

  reset(): void {
    this.words.reset();
    this.bigrams.reset();
    this.chars.reset();
    this.previous = undefined;
  }

  /** One lowercased word, in text order; one-letter words and stopwords do not count, digits do. */
  add(word: string): void {
    if ((word.length < 2 && !(word.length === 1 && isDigit(word.charCodeAt(0)))) || STOPWORDS.has(word)) return;
    const wordHash = hashString(SEED_WORD, stem(word));
    this.words.add(wordHash);
    if (this.previous !== undefined) this.bigrams.add(mix(Math.imul(this.previous ^ SEED_BIGRAM, FNV_PRIME) ^ wordHash));
    this.previous = wordHash;
    this.addCharGrams(word);
  }

  /** The 3-, 4- and 5-grams of `<word>`, one rolling FNV-1a per start position. */
  private addCharGrams(word: string): void {
    const length = word.length + 2;
    if (this.codes.length < length) this.codes = new Int32Array(length * 2);
    const codes = this.codes;
    codes[0] = 0x3c; // <
    for (let i = 0; i < word.length; i++) codes[i + 1] = word.charCodeAt(i);
    codes[length - 1] = 0x3e; // >
    for (let start = 0; start + 3 <= length; start++) {
      let h = Math.imul(SEED_CHAR ^ codes[start], FNV_PRIME);
      h = Math.imul(h ^ codes[start + 1], FNV_PRIME);
      h = Math.imul(h ^ codes[start + 2], FNV_PRIME);
      this.chars.add(mix(h));
      if (start + 4 > length) continue;
      h = Math.imul(h ^ codes[start + 3], FNV_PRIME);
      this.chars.add(mix(h));
      if (start + 5 > length) continue;
      h = Math.imul(h ^ codes[start + 4], FNV_PRIME);
      this.chars.add(mix(h));
    }
  }
}

/** `1 + Math.log(n)` for small counts (most are 1), computed once. */
const TF = Float64Array.from({ length: 64 }, (_, n) => 1 + Math.log(n));

/** `embedText` is synchronous, so one set of tables serves every call. */
const FEATURES = new Features();

/** A letter or a number, tested at one index: only for code points outside ASCII. */
const WORD_CODE_POINT = /[\p{L}\p{N}]/uy;
const CAMEL = /\p{Ll}\p{Lu}/u;
const CAMEL_BOUNDARY = /(?<=\p{Ll})(?=\p{Lu})/u;

/**
 * Each token of `text` (a run of letters and numbers) as lowercased words: a camelCase
 * identifier yields its parts, then itself; snake_case splits at the underscore anyway.
 * Scans char codes; a token with a character outside ASCII takes the regex path.
 */
function forEachWord(text: string, features: Features): void {
  let start = -1;
  let ascii = true;
  for (let i = 0; i <= text.length; ) {
    const c = i < text.length ? text.charCodeAt(i) : 0;
    let size = 1;
    let letter = isAsciiAlphanumeric(c);
    if (c > 0x7f) {
      WORD_CODE_POINT.lastIndex = i;
      letter = WORD_CODE_POINT.test(text);
      // Step over a whole surrogate pair, letter or not, as the `u` flag does.
      size = c >= 0xd800 && c <= 0xdbff && isTrail(text.charCodeAt(i + 1)) ? 2 : 1;
    }
    if (letter) {
      if (start < 0) {
        start = i;
        ascii = true;
      }
      if (c > 0x7f) ascii = false;
    } else if (start >= 0) {
      if (ascii) addAsciiToken(text, start, i, features);
      else addToken(text.slice(start, i), features);
      start = -1;
    }
    i += size;
  }
}

function addAsciiToken(text: string, start: number, end: number, features: Features): void {
  // In ASCII, \p{Ll} is a-z and \p{Lu} is A-Z.
  let part = start;
  for (let i = start + 1; i < end; i++) {
    if (isUpper(text.charCodeAt(i)) && isLower(text.charCodeAt(i - 1))) {
      features.add(text.slice(part, i).toLowerCase());
      part = i;
    }
  }
  if (part > start) features.add(text.slice(part, end).toLowerCase());
  features.add(text.slice(start, end).toLowerCase());
}

function addToken(raw: string, features: Features): void {
  if (CAMEL.test(raw)) for (const part of raw.split(CAMEL_BOUNDARY)) features.add(part.toLowerCase());
  features.add(raw.toLowerCase());
}

/**
 * A light suffix stripper (far simpler than Porter): enough for "deploys", "deploying",
 * "deployed" and "configured" / "configure" to meet. Character n-grams cover the rest.
 */
export function stem(word: string): string {
  let w = word;
  if (w.length <= 3 || /[0-9]/.test(w)) return w;
  if (w.endsWith('ies') && w.length > 4) w = w.slice(0, -3) + 'y';
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('ing') && w.length > 5) w = w.slice(0, -3);
  else if (w.endsWith('ed') && w.length > 4) w = w.slice(0, -2);
  else if (w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us') && !w.endsWith('is')) w = w.slice(0, -1);
  if (w.length > 4 && w.endsWith('e')) w = w.slice(0, -1);
  // "running" -> "runn" -> "run"; but keep "install", "process", "jazz".
  const last = w.charCodeAt(w.length - 1);
  if (w.length > 3 && last === w.charCodeAt(w.length - 2) && last !== 0x6c && last !== 0x73 && last !== 0x7a) {
    w = w.slice(0, -1);
  }
  return w;
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

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isLower = (c: number) => c >= 0x61 && c <= 0x7a;
const isUpper = (c: number) => c >= 0x41 && c <= 0x5a;
const isAsciiAlphanumeric = (c: number) => isDigit(c) || isLower(c) || isUpper(c);
const isTrail = (c: number) => c >= 0xdc00 && c <= 0xdfff;

