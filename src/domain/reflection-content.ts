/**
 * Whether a text says enough to be kept as a reflection. A reflection is injected into
 * later requests and found by its words; one that says nothing ("The s", a cut-off
 * fragment, "Done.") costs a line of every prompt it reaches and can never be relevant.
 * So every way a reflection is written (extraction, MCP `remember`, the management API
 * and the dashboard) refuses a text of fewer than `MIN_WORDS` words, or with fewer than
 * `MIN_CONTENT_WORDS` content words: words other than the function words keyword search
 * ignores (`STOPWORDS`: "the", "is", "to", ...) and one-character ones.
 *
 * The bar was set from the reflections the evaluation sets (`bench/eval`: LoCoMo's 677, the
 * injection sets' 107) and the tests hold: the shortest have three words ("Tests use uvu.")
 * and two content words ("The queue is nats."); none is refused. "Use pnpm." is.
 *
 * Scripts written without spaces (Chinese, Japanese) count each of their characters as a
 * word, so a sentence in them is not taken for one long word.
 */
import { STOPWORDS, words } from './text.js';

export const MIN_WORDS = 3;
export const MIN_CONTENT_WORDS = 2;

export interface WordCount {
  words: number;
  /** Words that are not function words (`STOPWORDS`) nor one character long. */
  contentWords: number;
}

/** Characters of scripts written without spaces between words: each counts as a word. */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/gu;

/** How many words, and content words, `text` has. Engram's own `[REDACTED:kind]` markers are not words of it. */
export function wordCount(text: string): WordCount {
  const count: WordCount = { words: 0, contentWords: 0 };
  for (const word of words(text.replace(/\[REDACTED:[a-z_]+\]/g, ' '))) {
    const unspaced = word.match(UNSPACED)?.length ?? 0;
    if (unspaced > 0) {
      // Each such character, and each run of other letters between them, is a word.
      const rest = word.replace(UNSPACED, ' ').trim();
      const others = rest === '' ? 0 : rest.split(/\s+/).length;
      count.words += unspaced + others;
      count.contentWords += unspaced + others;
      continue;
    }
    count.words++;
    if (word.length > 1 && !STOPWORDS.has(word)) count.contentWords++;
  }
  return count;
}

/**
 * Why `text` says too little to be a reflection, in a sentence for whoever wrote it;
 * undefined when it says enough. The one rule every writer of reflections applies.
 */
export function contentProblem(text: string): string | undefined {
  const { words: n, contentWords: content } = wordCount(text);
  if (n >= MIN_WORDS && content >= MIN_CONTENT_WORDS) return undefined;
  const has = `it has ${n} word${n === 1 ? '' : 's'}, ${content === 0 ? 'no' : content} content word${content === 1 ? '' : 's'}`;
  return (
    `a reflection needs at least ${MIN_WORDS} words, ${MIN_CONTENT_WORDS} of them content words ` +
    `(words such as "the", "is" or "to" do not count), to say something a later request can use: ${has}`
  );
}
