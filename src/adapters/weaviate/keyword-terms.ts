/**
 * Free user text to the words sent to Weaviate's BM25. Weaviate's BM25 has no query
 * syntax, but reducing the text to words here first makes "no words" decidable before a
 * call (the port returns no matches then, without asking Weaviate), bounds the query's
 * size, and leaves nothing for quotes, `AND`, `NEAR(`, `*` or `col:` to mean.
 */

/** More terms make BM25 slower without improving which reflections come back. */
export const MAX_KEYWORD_TERMS = 32;

/**
 * Weaviate's `en` stopword preset (the collection's default), which it drops from BM25
 * queries anyway: a query of only these has no words.
 */
export const STOPWORDS: ReadonlySet<string> = new Set(
  ('a an and are as at be but by for if in into is it no not of on or such that the their then there ' +
    'these they this to was will with').split(' '),
);

/**
 * Distinct non-stopword words of the text, in order, at most `maxTerms`. Split the way
 * Weaviate's `word` tokenisation splits the stored text: lower case, runs of Unicode
 * letters and digits. Diacritics are kept, as Weaviate keeps them: `café` only matches
 * `café`.
 */
export function keywordTerms(text: string, maxTerms = MAX_KEYWORD_TERMS): string[] {
  const terms = new Set<string>();
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (STOPWORDS.has(word)) continue;
    terms.add(word);
    if (terms.size >= maxTerms) break;
  }
  return [...terms];
}
