/**
 * The terms keyword search matches on, the same for stored reflections and for queries
 * and on every engine: words (lower case, diacritics removed, split on anything but
 * letters and digits), without function words and one-character words, reduced to their
 * stem (Porter2, English) so that "camped", "camping" and "camps" meet, as "deploys" and
 * "deployment" do. Identifiers split into their words: `deploy.sh` gives `deploy`, `sh`.
 * The stemmer is a package, so this lives in memory, not in the pure domain (`words`).
 */
import { createRequire } from 'node:module';
import { STOPWORDS, words } from '../domain/text.js';

// wink-porter2-stemmer is CommonJS without types: one function, word -> stem.
const stemWord = createRequire(import.meta.url)('wink-porter2-stemmer') as (word: string) => string;

/** Stems of the words seen so far: the same few thousand words recur on every request. */
const STEMS = new Map<string, string>();
const STEM_CACHE_MAX = 200_000;

export function stem(word: string): string {
  let stemmed = STEMS.get(word);
  if (stemmed === undefined) {
    // Digits and mixed identifiers (`v2`, `s3`, `utf8`) are kept as they are.
    stemmed = /^[a-z]+$/.test(word) ? stemWord(word) : word;
    if (STEMS.size >= STEM_CACHE_MAX) STEMS.clear();
    STEMS.set(word, stemmed);
  }
  return stemmed;
}

/** The keyword terms of a text: stems of its content words, in order, with repeats. */
export function keywordTerms(text: string): string[] {
  const out: string[] = [];
  for (const word of words(text)) {
    if (word.length < 2 || STOPWORDS.has(word)) continue;
    out.push(stem(word));
  }
  return out;
}
