/**
 * Turns free user text into a safe FTS5 MATCH expression: words only, each quoted as a
 * string (so `AND`, `NEAR(`, `*`, `"` and column filters in user text are inert), joined
 * with OR so any shared word counts and BM25 ranks the overlap.
 */

/** More terms make BM25 slower without improving which reflections come back. */
export const MAX_KEYWORD_TERMS = 32;

/** `undefined` when the text holds no words: the search is then vector only. */
export function toFtsQuery(text: string, maxTerms = MAX_KEYWORD_TERMS): string | undefined {
  const terms = new Set<string>();
  for (const match of text.toLowerCase().matchAll(/[\p{L}\p{N}]+/gu)) {
    terms.add(match[0]);
    if (terms.size >= maxTerms) break;
  }
  if (terms.size === 0) return undefined;
  // Words hold only letters and digits, so wrapping them in quotes needs no escaping.
  return [...terms].map((term) => `"${term}"`).join(' OR ');
}
