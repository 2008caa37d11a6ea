/**
 * Free user text to the terms sent to Weaviate's BM25: the same stems the stored `terms`
 * property holds (`memory/keywords.ts`), distinct, at most 32. Reducing the text here
 * first makes "no terms" decidable before a call (the port returns no matches then,
 * without asking Weaviate) and leaves nothing for quotes, `AND`, `NEAR(`, `*` or `col:`
 * to mean.
 */
import { keywordTerms as termsOf } from '../../memory/keywords.js';

/** More terms make BM25 slower without improving which reflections come back. */
export const MAX_KEYWORD_TERMS = 32;

export function keywordTerms(text: string, maxTerms = MAX_KEYWORD_TERMS): string[] {
  return [...new Set(termsOf(text))].slice(0, maxTerms);
}
