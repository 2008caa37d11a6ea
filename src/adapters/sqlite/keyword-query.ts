/**
 * Free user text to keyword query terms: words only (so `AND`, `NEAR(`, `*`, `"`, `col:`
 * in user text are inert), matched as OR, so any shared word counts and BM25 ranks the
 * overlap. Documents and queries are tokenised by the same `words()`.
 */

/** More terms make BM25 slower without improving which reflections come back. */
export const MAX_KEYWORD_TERMS = 32;

/** Weaviate's `en` stopword preset (Lucene's English set): never worth a lookup. */
export const STOPWORDS: ReadonlySet<string> = new Set(
  ('a an and are as at be but by for if in into is it no not of on or such that the their then there ' +
    'these they this to was will with').split(' '),
);

/**
 * The words of a text as the keyword index sees them: lower case, diacritics removed,
 * split on anything but letters and digits (SQLite FTS5's `unicode61 remove_diacritics 2`
 * tokenizer, which the index used before it moved into memory), in order, with repeats.
 */
export function words(text: string): string[] {
  const lower = text.toLowerCase();
  // Most text is ASCII: skip Unicode normalisation (the costly part) when it is.
  if (!/[^\x00-\x7f]/.test(lower)) return lower.match(/[a-z0-9]+/g) ?? [];
  const plain = lower.normalize('NFKD').replace(/\p{M}+/gu, '');
  return plain.match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** Distinct non-stopword words of the query, at most `maxTerms`. */
export function queryTerms(text: string, maxTerms = MAX_KEYWORD_TERMS): string[] {
  const terms = new Set<string>();
  for (const word of words(text)) {
    if (STOPWORDS.has(word)) continue;
    terms.add(word);
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
