/**
 * The terms of a text that may name something specific to a project (DESIGN section 6):
 * a repository, file or path, command, script, service, package, ticket, environment
 * variable, identifier or product name. Pure text analysis, no judgement: how specific a
 * term is (how rare among an agent's reflections, whether the word vectors know it) is
 * decided in `memory/named-terms.ts`, which reads what this module records of each term's
 * form in the text.
 *
 * Two kinds of term:
 *   - identifiers: tokens shaped like code (`billing-svc`, `.env.local`, `db:migrate`,
 *     `packages/ui/tokens.json`, `MAPBOX_TOKEN`, `TW-4031`, `useQuery`, `s3`), kept as the
 *     sequence of their words (`billing svc`), so "the billing svc" said in prose matches
 *     `billing-svc`, and a path's tail (`tokens.json`) matches the whole path;
 *   - words, each with how the text writes it: capitalised inside a sentence (a proper
 *     name: "Sentry", "Kafka"), and whether it also stands alone outside identifiers (a
 *     bare "rollback" in a request is weak evidence for a reflection that only holds the
 *     path `scripts/rollback.sh`).
 */
import { STOPWORDS, words } from '../domain/text.js';
import { stem } from './keywords.js';

export interface Identifier {
  /** Its words, lower case, in order (`billing-svc` → `billing`, `svc`). */
  words: string[];
  /** As written, trimmed of surrounding punctuation: what a person would quote. */
  text: string;
  /**
   * Shaped like code rather than like a compound word: a path, dotted or underscored
   * name, a colon, an `@` scope, digits among letters, or camelCase. `on-call` and
   * `end-to-end` are dashed but not code-like.
   */
  codeLike: boolean;
}

export interface WordForm {
  /** The word in lower case (the stem is the map's key). */
  word: string;
  /** As the text first writes it, capitalised if it ever is (what a person would quote). */
  written: string;
  /** Written with a capital inside a sentence at least once, and not as an all-capitals acronym. */
  capitalised: boolean;
  /** Found at least once outside any identifier. */
  standalone: boolean;
}

export interface TermForms {
  identifiers: Identifier[];
  /** Content words (no stopwords, at least two characters), by stem. */
  words: Map<string, WordForm>;
}

/** A run of characters that may form one identifier. */
const TOKEN = /[\p{L}\p{N}_@./:\\~$#-]+/gu;
const INNER_SEPARATOR = /[\p{L}\p{N}][._/:\\@-][\p{L}\p{N}]/u;
const DOTFILE_OR_SCOPE = /^[.@][\p{L}\p{N}]/u;
const CODE_SEPARATOR = /[\p{L}\p{N}][._/:\\@][\p{L}\p{N}]/u;
const SENTENCE_END = /[.!?:;\n]\s*$/u;
const LOWER_WORD = /^[a-z]+$/;

/**
 * The identifiers and word forms of `text`. Linear in the text; callers bound what they
 * give it (a request's query text, a reflection's content and tags).
 */
export function termForms(text: string): TermForms {
  const identifiers: Identifier[] = [];
  const forms = new Map<string, WordForm>();
  for (const match of text.matchAll(TOKEN)) {
    const raw = match[0];
    // Most tokens are lower-case words: no identifier, no capital, nothing to trim.
    if (LOWER_WORD.test(raw)) {
      note(forms, raw, false, true);
      continue;
    }
    const token = trimEdges(raw);
    if (token === '') continue;
    const identifier = asIdentifier(token);
    if (identifier) {
      identifiers.push(identifier);
      for (const word of identifier.words) note(forms, word, false, false);
      continue;
    }
    // A plain word (or a few joined by an apostrophe-free dash run that is not shaped).
    const before = text.slice(Math.max(0, match.index - 3), match.index);
    const sentenceStart = match.index === 0 || SENTENCE_END.test(text.slice(Math.max(0, match.index - 2), match.index)) || /["'(`[]\s*$/u.test(before);
    for (const word of token.match(/[\p{L}\p{N}]+/gu) ?? []) note(forms, word, !sentenceStart && /^\p{Lu}\p{Ll}/u.test(word), true);
  }
  return { identifiers, words: forms };
}

/** Records one occurrence of a word, as `written`, in `forms`. */
function note(forms: Map<string, WordForm>, written: string, capitalised: boolean, standalone: boolean): void {
  const word = written.toLowerCase();
  if (word.length < 2 || STOPWORDS.has(word)) return;
  const key = stem(word);
  const seen = forms.get(key);
  if (!seen) forms.set(key, { word, written, capitalised, standalone });
  else {
    if (capitalised && !seen.capitalised) seen.written = written;
    seen.capitalised ||= capitalised;
    seen.standalone ||= standalone;
  }
}

/** `token` as an identifier, or undefined when it is a plain word. */
function asIdentifier(token: string): Identifier | undefined {
  const letters = /\p{L}/u.test(token);
  const digits = /\p{N}/u.test(token);
  const camel = /\p{Ll}\p{Lu}/u.test(token);
  const separated = INNER_SEPARATOR.test(token) || DOTFILE_OR_SCOPE.test(token);
  // Numbers, dates and times (`14:00`, `2024-03-01`, `0.1`) name nothing.
  if (!letters) return undefined;
  if (!separated && !camel && !(letters && digits)) return undefined;
  const parts = words(camel ? token.replace(/(\p{Ll})(\p{Lu})/gu, '$1 $2') : token);
  if (parts.length === 0 || parts.join('').length < 3) return undefined;
  // Abbreviations like "e.g." and "i.e." are dotted single letters.
  if (parts.every((part) => part.length === 1)) return undefined;
  const codeLike = CODE_SEPARATOR.test(token) || DOTFILE_OR_SCOPE.test(token) || camel || (letters && digits) || /_/u.test(token);
  return { words: parts, text: token, codeLike };
}

/**
 * `raw` without the punctuation around it that is not part of a name: a sentence's full
 * stop or colon, a relative path's `./`; a dotfile's leading dot and a scope's `@` stay.
 */
function trimEdges(raw: string): string {
  let start = 0;
  let end = raw.length;
  while (end > start && '.:/\\~#-'.includes(raw[end - 1])) end--;
  for (;;) {
    if (raw.startsWith('./', start) || raw.startsWith('.\\', start)) start += 2;
    else if (raw.startsWith('../', start)) start += 3;
    else if (start < end && ':/\\~#-'.includes(raw[start])) start++;
    else break;
  }
  return raw.slice(start, end);
}

/** True when `sequence` occurs in `within` as consecutive words. */
export function containsSequence(within: readonly string[], sequence: readonly string[]): boolean {
  if (sequence.length === 0 || sequence.length > within.length) return false;
  outer: for (let i = 0; i + sequence.length <= within.length; i++) {
    for (let j = 0; j < sequence.length; j++) if (within[i + j] !== sequence[j]) continue outer;
    return true;
  }
  return false;
}
