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

/**
 * `make` remembered by key until `max` keys are held, then all forgotten at once: for what
 * every request asks again of the same words and reflections.
 */
export function remembered<T, A = void>(max: number, make: (key: string, arg: A) => T): (key: string, arg: A) => T {
  const held = new Map<string, T>();
  return (key, arg) => {
    let value = held.get(key);
    if (value === undefined) {
      value = make(key, arg);
      if (held.size >= max) held.clear();
      held.set(key, value);
    }
    return value;
  };
}

/** Stems of the words seen so far, up to this many: the same few thousand words recur on every request. */
const STEM_CACHE_MAX = 200_000;

// Digits and mixed identifiers (`v2`, `s3`, `utf8`) are kept as they are.
export const stem = remembered(STEM_CACHE_MAX, (word): string => (/^[a-z]+$/.test(word) ? stemWord(word) : word));

/** The keyword terms of a text: stems of its content words, in order, with repeats. */
export function keywordTerms(text: string): string[] {
  const out: string[] = [];
  for (const word of words(text)) {
    if (word.length < 2 || STOPWORDS.has(word)) continue;
    out.push(stem(word));
  }
  return out;
}
