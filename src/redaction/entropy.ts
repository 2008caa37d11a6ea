/**
 * Whether a token looks generated (a key, a token, a random password) rather than written
 * by a person (an identifier, a path, a model name, a word). Used where a credential word
 * stands next to a value, and for the few bare shapes redacted without one.
 *
 * A random token has high Shannon entropy and is not made of words: its letters do not
 * form runs like `Button`, `created`, `HTTP`. Both tests are needed: `ButtonGroup2Test`
 * has high entropy but is all words; `aaaaaaaaaaaaaaaa1` is not words but is not random.
 */

/** Shannon entropy of `text`, in bits per character. */
export function entropy(text: string): number {
  const counts = new Map<number, number>();
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / text.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/** Shortest value the entropy test judges: below it a random string and a word look alike. */
export const MIN_RANDOM_LENGTH = 16;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HEX = /^[0-9a-f]+$|^[0-9A-F]+$/;

export const isUuid = (token: string): boolean => UUID.test(token);

/**
 * `token` looks generated: at least `MIN_RANDOM_LENGTH` characters of at least two of
 * lower case, upper case and digits, entropy of at least 3 bits a character for hex and
 * 3.5 for anything else (random base62 of 16 characters averages 3.8; `created_at_desc`
 * 3.4), and less than half of its letters in word-like runs.
 */
export function looksRandom(token: string): boolean {
  if (token.length < MIN_RANDOM_LENGTH) return false;
  const lower = /[a-z]/.test(token);
  const upper = /[A-Z]/.test(token);
  const digit = /[0-9]/.test(token);
  if (Number(lower) + Number(upper) + Number(digit) < 2) return false;
  if (HEX.test(token)) return entropy(token) >= 3;
  if (looksLikePath(token)) return false;
  return entropy(token) >= 3.5 && wordShare(token) < 0.5;
}

/**
 * `uploads/2024/11/<uuid>/report.pdf`, `src/components/Button`: a file name at the end, or
 * a segment of four or more letters that reads as a word. An AWS secret's segments
 * (`wJalrXUtnFEMI/K7MDENG/bPxRfiCY…`) read as neither.
 */
function looksLikePath(token: string): boolean {
  if (!token.includes('/')) return false;
  if (/\.[a-z][a-z0-9]{0,4}$/.test(token)) return true;
  return token.split('/').some((segment) => segment.length >= 4 && isWordLike(segment));
}

/**
 * The share of `token`'s letters and digits that sit in word-like parts. Parts are split
 * at anything but a letter or a digit, between letters and digits, and at camel-case
 * humps; a part is word-like when it reads as one (`Button`, `http`, `JSON`) and, if
 * longer than three letters, has a vowel in every five letters.
 */
const PARTS = /[^A-Za-z0-9]+|(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])|(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])/;

export function wordShare(token: string): number {
  let alnum = 0;
  let wordy = 0;
  for (const part of token.split(PARTS)) {
    alnum += part.length;
    if (isWordLike(part)) wordy += part.length;
  }
  return alnum === 0 ? 0 : wordy / alnum;
}

/**
 * `token` reads as words: half its letters in word-like parts (`wordShare`) and, as well,
 * a word of four letters or more for every ten characters. Random letters and digits make
 * short word-like parts often enough (`Tdxve`, `Ghz`) that half of a random 30-character
 * token is in them one time in seven; four-letter words that dense they make about one time
 * in a hundred (64 base64 characters: one in ten thousand), while an identifier
 * (`shouldReturn404WhenUserIsMissing`) has one every six or seven characters.
 */
export function readsAsWords(token: string): boolean {
  if (wordShare(token) < 0.5) return false;
  let words = 0;
  for (const part of token.split(PARTS)) if (part.length >= 4 && /^[A-Z]?[a-z]+$/.test(part) && isWordLike(part)) words++;
  return words * 10 >= token.length;
}

function isWordLike(part: string): boolean {
  if (part.length < 3 || !/^(?:[A-Z]?[a-z]+|[A-Z]+)$/.test(part)) return false;
  // Vowels (y counts) spread through it: "strength" passes, "xqzvbnkl" does not.
  return part.length <= 3 || (/[aeiouy]/i.test(part) && !/[^aeiouy]{5}/i.test(part));
}
