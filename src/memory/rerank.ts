/**
 * Second-stage ranking of hybrid search candidates by soft term matching: how well each
 * of the query's words is matched by some word of the reflection (its content, topic and
 * tags), exactly (same stem) or by meaning (word-vector cosine), weighted by how rare the
 * query word is. It finds
 * "my build dies because the cache server is down" in "Start Redis with docker compose
 * before npm run build" where one averaged vector per text blurs the words together.
 * It runs on the handful of candidates a search returns, not on the whole store.
 */
import type { ScoredReflection } from '../domain/types.js';
import { STOPWORDS, words } from '../domain/text.js';
import { remembered, stem } from './keywords.js';
import { subjectTags } from '../domain/reflection-text.js';
import type { WordVectors } from './embedders/word-vectors.js';

export interface Reranker {
  /** The results reordered, best first; each keeps its scores, `score` becomes the blend (one result is scored too). */
  rerank(query: string, results: readonly ScoredReflection[]): ScoredReflection[];
}

/** Below this cosine two words are not taken as meaning the same. */
const MATCH_FLOOR = 0.4;
/** Share of the final score from soft matching; the rest from the fused hybrid score. */
const SOFT_SHARE = 0.5;
/** Query words considered: the rarest ones carry the question. */
const MAX_QUERY_WORDS = 24;
/** Reflections whose words are kept between searches. */
const HELD_MAX = 20_000;

interface Term {
  word: string;
  stem: string;
  row: number | undefined;
  weight: number;
}

export function createSoftMatchReranker(vectors: WordVectors): Reranker {
  const terms = (text: string): Term[] => {
    const seen = new Map<string, Term>();
    for (const word of words(text)) {
      if (word.length < 2 || STOPWORDS.has(word) || seen.has(word)) continue;
      const row = vectors.row(word);
      // A word outside the vocabulary (a name, an identifier) is as rare as words get.
      seen.set(word, { word, stem: stem(word), row, weight: row === undefined ? 1 : vectors.weight(row) });
    }
    return [...seen.values()];
  };
  // A reflection's words are looked up again on every search that finds it: keep them.
  const termsOf = remembered(HELD_MAX, terms);
  return {
    rerank(query, results) {
      if (results.length === 0) return [];
      const asked = terms(query).sort((a, b) => b.weight - a.weight).slice(0, MAX_QUERY_WORDS);
      const total = asked.reduce((sum, term) => sum + term.weight, 0);
      if (total === 0) return [...results];
      // Every cosine a search needs (each query word to each vocabulary row its candidates
      // hold) in one batch, which runs as SIMD (`WordVectors.cosines`).
      const candidates = results.map(({ reflection }) => termsOf(`${reflection.content} ${reflection.topic} ${subjectTags(reflection.tags).join(' ')}`));
      const column = new Map<number, number>();
      for (const words of candidates) for (const word of words) if (word.row !== undefined && !column.has(word.row)) column.set(word.row, column.size);
      const askedRows: number[] = [];
      const line = asked.map((term) => (term.row === undefined ? -1 : askedRows.push(term.row) - 1));
      const table = vectors.cosines(askedRows, [...column.keys()]);
      const width = column.size;
      return results
        .map((result, index) => {
          const words = candidates[index];
          const columns = words.map((word) => (word.row === undefined ? -1 : column.get(word.row)!));
          let matched = 0;
          for (let t = 0; t < asked.length; t++) {
            const term = asked[t];
            const at = line[t] < 0 ? -1 : line[t] * width;
            let best = 0;
            for (let w = 0; w < words.length; w++) {
              const word = words[w];
              const similarity =
                word.stem === term.stem || (term.row !== undefined && word.row === term.row) ? 1 : at >= 0 && columns[w] >= 0 ? table[at + columns[w]] : 0;
              if (similarity > best) best = similarity;
              if (best === 1) break;
            }
            if (best >= MATCH_FLOOR) matched += term.weight * best;
          }
          const matchScore = matched / total;
          return { ...result, score: (1 - SOFT_SHARE) * result.score + SOFT_SHARE * matchScore, matchScore };
        })
        .sort((a, b) => b.score - a.score);
    },
  };
}
