/**
 * One agent's keyword index, in memory: an inverted index (word -> documents with the
 * word's frequency in each) plus every document's length, scored with BM25 using
 * Weaviate's defaults (k1 = 1.2, b = 0.75, IDF = ln(1 + (N - n + 0.5) / (n + 0.5))).
 * A document is a reflection's content, topic and tags as one field, tokenised by
 * `keywordTerms()` (stems of content words, as queries are). It lives in the agent's
 * snapshot (agent-snapshot.ts) and is patched by this process's own writes, so a query
 * touches no SQL: it costs one pass over the postings of its terms (bounded by
 * `pruneTerms`) and a selection of the best `limit`.
 * (No closures in the query path: see top-candidates.ts.)
 */
import { TopCandidates } from './top-candidates.js';
import type { Candidate } from './candidates.js';
import { keywordTerms } from '../../memory/keywords.js';

export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

export interface KeywordDocument {
  seq: number;
  kind: number;
  text: string;
}

/** Shared by new words until their first postings: never written to. */
const EMPTY = new Int32Array(0);

/** One word's documents: parallel arrays, unordered (removal swaps in the last entry). */
interface Postings {
  slots: Int32Array;
  counts: Int32Array;
  length: number;
}

export class KeywordIndex {
  /** Every word seen gets a dense id; postings and scratch counts are indexed by it. */
  readonly #ids = new Map<string, number>();
  readonly #postings: Postings[] = [];
  /** Per word id: occurrences in the document being indexed; zero otherwise. */
  #frequency = new Int32Array(64);
  /** Distinct word ids of the document being indexed. */
  #distinct = new Int32Array(64);
  readonly #slotOfSeq = new Map<number, number>();
  /** Slots freed by removals, reused before new ones. */
  readonly #free: number[] = [];
  /** Distinct word ids of the document in each slot, to find its postings on removal. */
  readonly #terms: (Int32Array | undefined)[] = [];
  #seqs = new Float64Array(0);
  #lengths = new Int32Array(0);
  #kinds = new Uint8Array(0);
  /** Per-slot score accumulator of a query; all zero between queries. */
  #scores = new Float64Array(0);
  #touched = new Int32Array(0);
  /** Slots ever used (the high-water mark). */
  #slots = 0;
  #count = 0;
  #totalLength = 0;

  /** Documents indexed. */
  get count(): number {
    return this.#count;
  }

  /** Documents containing `term` (as `keywordTerms()` returns it). */
  documentFrequency(term: string): number {
    const id = this.#ids.get(term);
    return id === undefined ? 0 : this.#postings[id].length;
  }

  /** Indexes (or re-indexes) the document of `seq`. */
  put(seq: number, kind: number, text: string): void {
    this.putAll([{ seq, kind, text }]);
  }

  /**
   * Indexes (or re-indexes) many documents at once, with distinct seqs: a snapshot
   * build. Each word's postings grow once, to the exact size, not by doubling.
   */
  putAll(documents: readonly KeywordDocument[]): void {
    // Pass 1: tokenise, give each document a slot, count the postings each word gains.
    const docSlots: number[] = [];
    const docEnds: number[] = [];
    const newIds: number[] = [];
    const newCounts: number[] = [];
    let gained = new Int32Array(this.#postings.length + 64);
    for (const { seq, kind, text } of documents) {
      this.remove(seq);
      const tokens = keywordTerms(text);
      if (this.#distinct.length < tokens.length) this.#distinct = new Int32Array(tokens.length * 2);
      const distinct = this.#distinct;
      let size = 0;
      for (const token of tokens) {
        const id = this.#ids.get(token) ?? this.#newWord(token);
        if (this.#frequency[id]++ === 0) distinct[size++] = id;
      }
      const frequency = this.#frequency; // after #newWord, which may replace it
      const slot = this.#allocate();
      this.#slotOfSeq.set(seq, slot);
      this.#seqs[slot] = seq;
      this.#lengths[slot] = tokens.length;
      this.#kinds[slot] = kind;
      this.#terms[slot] = distinct.slice(0, size);
      this.#count++;
      this.#totalLength += tokens.length;
      if (gained.length < this.#postings.length) gained = growInt32(gained, this.#postings.length * 2);
      for (let i = 0; i < size; i++) {
        const id = distinct[i];
        newIds.push(id);
        newCounts.push(frequency[id]);
        frequency[id] = 0;
        gained[id]++;
      }
      docSlots.push(slot);
      docEnds.push(newIds.length);
    }
    // Pass 2: room for exactly what each word gains.
    for (let id = 0; id < this.#postings.length; id++) {
      const postings = this.#postings[id];
      const needed = postings.length + gained[id];
      if (needed > postings.slots.length) {
        postings.slots = growInt32(postings.slots, needed);
        postings.counts = growInt32(postings.counts, needed);
      }
    }
    // Pass 3: append.
    let start = 0;
    for (let d = 0; d < docSlots.length; d++) {
      const slot = docSlots[d];
      for (let j = start; j < docEnds[d]; j++) {
        const postings = this.#postings[newIds[j]];
        postings.slots[postings.length] = slot;
        postings.counts[postings.length] = newCounts[j];
        postings.length++;
      }
      start = docEnds[d];
    }
  }

  /** Changes the kind of an indexed document (its words are unchanged). */
  setKind(seq: number, kind: number): void {
    const slot = this.#slotOfSeq.get(seq);
    if (slot !== undefined) this.#kinds[slot] = kind;
  }

  remove(seq: number): void {
    const slot = this.#slotOfSeq.get(seq);
    if (slot === undefined) return;
    this.#slotOfSeq.delete(seq);
    for (const id of this.#terms[slot] ?? []) {
      const postings = this.#postings[id];
      const at = postings.slots.subarray(0, postings.length).indexOf(slot);
      if (at < 0) continue;
      const last = --postings.length;
      postings.slots[at] = postings.slots[last];
      postings.counts[at] = postings.counts[last];
    }
    this.#terms[slot] = undefined;
    this.#count--;
    this.#totalLength -= this.#lengths[slot];
    this.#free.push(slot);
  }

  /**
   * The `limit` best documents for the terms (distinct words; a document matches if it
   * has any), optionally of one kind, in no particular order (fusion orders them);
   * `score` is BM25, higher is better. Of equal scores the lower (older) seq is kept.
   */
  search(terms: readonly string[], limit: number, kind?: number): Candidate[] {
    if (limit <= 0 || this.#count === 0 || terms.length === 0) return [];
    const scores = this.#scores;
    const touched = this.#touched;
    const lengths = this.#lengths;
    const documents = this.#count;
    // BM25 per posting: idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avgLength)).
    const lengthWeight = (BM25_K1 * BM25_B * documents) / Math.max(1, this.#totalLength);
    const base = BM25_K1 * (1 - BM25_B);
    let size = 0;
    for (const term of terms) {
      const id = this.#ids.get(term);
      if (id === undefined) continue;
      const postings = this.#postings[id];
      const n = postings.length;
      if (n === 0) continue;
      const weight = Math.log(1 + (documents - n + 0.5) / (n + 0.5)) * (BM25_K1 + 1);
      const { slots, counts } = postings;
      for (let i = 0; i < n; i++) {
        const slot = slots[i];
        const tf = counts[i];
        // Every contribution is positive, so a zero score means "not seen yet".
        if (scores[slot] === 0) touched[size++] = slot;
        scores[slot] += (weight * tf) / (tf + base + lengthWeight * lengths[slot]);
      }
    }
    const best = this.#best(size, limit, kind);
    for (let i = 0; i < size; i++) scores[touched[i]] = 0;
    return best;
  }

  /** The best `limit` of the touched slots (of the kind, if given). */
  #best(size: number, limit: number, kind: number | undefined): Candidate[] {
    const scores = this.#scores;
    const seqs = this.#seqs;
    const kinds = this.#kinds;
    const touched = this.#touched;
    const best = new TopCandidates(Math.min(limit, size));
    for (let t = 0; t < size; t++) {
      const slot = touched[t];
      if (kind === undefined || kinds[slot] === kind) best.offer(scores[slot], seqs[slot]);
    }
    return best.unordered();
  }

  /** Registers a word (ids are never reused: a snapshot is rebuilt long before that matters). */
  #newWord(word: string): number {
    const id = this.#postings.length;
    this.#ids.set(word, id);
    this.#postings.push({ slots: EMPTY, counts: EMPTY, length: 0 });
    if (id === this.#frequency.length) this.#frequency = growInt32(this.#frequency, id * 2);
    return id;
  }

  #allocate(): number {
    const reused = this.#free.pop();
    if (reused !== undefined) return reused;
    if (this.#slots === this.#seqs.length) {
      const capacity = Math.max(64, this.#slots * 2);
      const seqs = new Float64Array(capacity);
      seqs.set(this.#seqs);
      this.#seqs = seqs;
      this.#lengths = growInt32(this.#lengths, capacity);
      const kinds = new Uint8Array(capacity);
      kinds.set(this.#kinds);
      this.#kinds = kinds;
      this.#scores = new Float64Array(capacity);
      this.#touched = new Int32Array(capacity);
    }
    return this.#slots++;
  }
}

/** A copy with room for `capacity` entries (typed arrays do not grow in place). */
function growInt32(array: Int32Array, capacity: number): Int32Array<ArrayBuffer> {
  const bigger = new Int32Array(capacity);
  bigger.set(array);
  return bigger;
}
