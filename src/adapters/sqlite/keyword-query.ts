/**
 * Free user text to a safe FTS5 MATCH expression: words only, each quoted as a string
 * (so `AND`, `NEAR(`, `*`, `"`, `col:` in user text are inert), OR-ed so any shared
 * word counts and BM25 ranks the overlap.
 */

/** More terms make BM25 slower without improving which reflections come back. */
export const MAX_KEYWORD_TERMS = 32;

/** Weaviate's `en` stopword preset (Lucene's English set): never worth a lookup. */
export const STOPWORDS: ReadonlySet<string> = new Set(
  ('a an and are as at be but by for if in into is it no not of on or such that the their then there ' +
    'these they this to was will with').split(' '),
);

/**
 * The words of a text as the index sees them: lower case, diacritics removed (like the
 * `unicode61 remove_diacritics 2` tokenizer), in order, with repeats.
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
 * documents are dropped first: FTS5's BM25 gives them an IDF of ~0, so they would add
 * cost and no ranking signal. A store within the budget is searched exactly.
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

/** `undefined` for no terms: the search is then vector only. */
export function toFtsMatch(terms: readonly string[]): string | undefined {
  if (terms.length === 0) return undefined;
  // Terms hold only letters and digits, so wrapping them in quotes needs no escaping.
  return terms.map((term) => `"${term}"`).join(' OR ');
}
