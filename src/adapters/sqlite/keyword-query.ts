/**
 * Free user text to keyword query terms: words only (so `AND`, `NEAR(`, `*`, `"`, `col:`
 * in user text are inert), matched as OR, so any shared term counts and BM25 ranks the
 * overlap. Documents and queries are tokenised by the same `keywordTerms()`.
 */
import { keywordTerms } from '../../memory/keywords.js';

/** More terms make BM25 slower without improving which reflections come back. */
export const MAX_KEYWORD_TERMS = 32;

/** Distinct keyword terms of the query (`memory/keywords.ts`), at most `maxTerms`. */
export function queryTerms(text: string, maxTerms = MAX_KEYWORD_TERMS): string[] {
  const terms = new Set<string>();
  for (const term of keywordTerms(text)) {
    terms.add(term);
    if (terms.size >= maxTerms) break;
  }
  return [...terms];
}

/**
 * Keeps the query's cost bounded: BM25 costs time per matching row, so terms are taken
 * rarest first until their document frequencies add up to `postingBudget` (the rarest
 * is always kept). In a store larger than the budget, terms in more than half of the
 * documents are dropped first: BM25 gives them an IDF below ln 2, against ~ln N for a
 * rare word, so they would add the most cost for the least ranking signal. A store
 * within the budget is searched exactly.
 */
export function pruneTerms(
  terms: readonly string[],
  documentFrequency: (term: string) => number,
  documentCount: number,
  postingBudget: number,
): string[] {
  if (documentCount <= postingBudget) return [...terms];
  const ranked = terms
    .map((term) => ({ term, df: documentFrequency(term) }))
    .filter(({ df }) => df <= documentCount / 2)
    .sort((a, b) => a.df - b.df);
  const kept: string[] = [];
  let postings = 0;
  for (const { term, df } of ranked) {
    if (kept.length > 0 && postings + df > postingBudget) break;
    kept.push(term);
    postings += df;
  }
  return kept;
}
