/**
 * Named terms (DESIGN section 6): a request that names something specific to the project
 * that a reflection names gets that reflection, whatever the word vectors say of the rest.
 * "Specific" is read from data, never from a list of words:
 *   - its shape: an identifier shaped like code (`billing-svc`, `.env.local`,
 *     `db:migrate`, `MAPBOX_TOKEN`) is specific by itself;
 *   - whether English knows it: a word the word vectors do not hold ("pnpm", "kubectl",
 *     "quasar") or hold as rare ("Sentry") is a name; "install", "tests" or "the" are not.
 *     A word a reflection writes capitalised inside a sentence ("Vault", "Kafka") is a
 *     proper name there, however common the English word;
 *   - how rare it is among the agent's own reflections: a name most of them share (the
 *     project's own name, its package manager) picks out none of them.
 * A term's strength is the product of how name-like and how rare it is, in [0, 1].
 */
import { containsSequence, termForms, type Identifier, type TermForms, type WordForm } from './term-forms.js';
import { remembered, stem } from './keywords.js';
import { words } from '../domain/text.js';

/** What English knows of a word: its frequency rank, if it is among the known words. */
export interface Vocabulary {
  rank(word: string): number | undefined;
}

export interface NamedTerm {
  /** The term as the reflection writes it (a word, or an identifier's text). */
  term: string;
  /** How strongly it names something this reflection is about, in [0, 1]. */
  strength: number;
}

/** A request's side of the matching, analysed once per request. */
export interface NamedQuery {
  forms: TermForms;
  /** All words of the request, in order: identifiers are looked for in it as word runs. */
  sequence: string[];
  /** The same words as a set: most identifiers are ruled out by their first word. */
  said: ReadonlySet<string>;
}

/** Ranks below this are everyday English: no evidence of a name at all. */
const COMMON_RANK = 4_000;
/** Ranks above this are as rare as names get among the known words. */
const RARE_RANK = 30_000;
/** A capitalised word inside a sentence is a proper name at least this much. */
const PROPER_NAME = 0.8;
/** Reflections holding a term up to this many are all "the ones it names". */
const FEW = 3;
/** Reflections holding a term from which on it names none of them in particular. */
const MANY = 12;
/** A bare word that the reflection holds only inside an identifier is this much weaker. */
const PART_OF_IDENTIFIER = 0.5;
/** Request words worth a search of their own, at most (the rarest first). */
const MAX_PROBES = 12;

export function namedQuery(text: string): NamedQuery {
  const sequence = words(text);
  return { forms: termForms(text), sequence, said: new Set(sequence) };
}

/** How name-like a word is (`nameLikeness` against one vocabulary), remembered per word. */
export type Likeness = (word: string) => number;

/** Words whose likeness one `likenessIn` keeps. */
const LIKENESS_HELD = 50_000;

/**
 * `nameLikeness` against `vocabulary`, each word looked up once: a request asks it of the
 * same few words for every candidate it judges.
 */
export function likenessIn(vocabulary: Vocabulary | undefined): Likeness {
  return remembered(LIKENESS_HELD, (word) => nameLikeness(word, vocabulary));
}

/**
 * How name-like a word is by English alone, in [0, 1]: 0 for everyday words and numbers,
 * rising with rarity, 1 for a word the vocabulary does not hold. Without a vocabulary
 * (no word vectors loaded) only shape and capitals can tell, and a plain word says nothing.
 */
export function nameLikeness(word: string, vocabulary: Vocabulary | undefined): number {
  if (/^\p{N}+$/u.test(word)) {
    // Ports, status codes and ticket numbers name things; small numbers, years and days do not.
    return word.length >= 3 && !/^(19|20)\d\d$/u.test(word) ? 0.6 : 0;
  }
  if (!vocabulary) return 0;
  const rank = vocabulary.rank(word);
  if (rank === undefined) return word.length >= 3 ? 1 : 0.3;
  return clamp((Math.log(rank) - Math.log(COMMON_RANK)) / (Math.log(RARE_RANK) - Math.log(COMMON_RANK)));
}

/** How much a term held by `holders` of the agent's reflections singles them out, in [0, 1]. */
export function rarityAmong(holders: number): number {
  return clamp((MANY - holders) / (MANY - FEW));
}

/**
 * The request's words that may name something, best first: the words of its identifiers
 * and its words that are name-like by English or written as proper names. They are
 * searched for on their own, so a reflection naming one is considered even when the rest
 * of a long request outweighs it in the search. Stems, as the keyword search takes them.
 */
export function probeTerms(query: NamedQuery, likeness: Likeness): string[] {
  const scored = new Map<string, number>();
  const consider = (key: string, score: number) => {
    if (score > 0 && score > (scored.get(key) ?? 0)) scored.set(key, score);
  };
  for (const identifier of query.forms.identifiers) {
    for (const word of identifier.words) consider(stem(word), identifier.codeLike ? 1 : likeness(word));
  }
  for (const [key, form] of query.forms.words) consider(key, Math.max(likeness(form.word), form.capitalised ? PROPER_NAME : 0));
  return [...scored]
    .filter(([, score]) => score >= 0.5)
    .sort((a, b) => b[1] - a[1])
    .slice(0, MAX_PROBES)
    .map(([key]) => key);
}

/**
 * The strongest term `query` names that `reflection` (its forms) names too, or undefined.
 * `holders(stem)` is how many of the agent's current reflections hold the word.
 */
export function strongestNamedTerm(
  query: NamedQuery,
  reflection: TermForms,
  holders: (stem: string) => number,
  likeness: Likeness,
): NamedTerm | undefined {
  let term = '';
  let strength = 0;
  // An identifier of the reflection said in the request, in any form ("billing svc" for
  // `billing-svc`), or an identifier of the request found inside one of the reflection's
  // (`tokens.json` in `packages/ui/tokens.json`). Runs per candidate on the request path:
  // no closures, and most identifiers are ruled out by a set lookup.
  for (const identifier of reflection.identifiers) {
    if (!identifier.words.some((word) => query.said.has(word))) continue;
    if (!containsSequence(query.sequence, identifier.words) && !holdsAskedIdentifier(identifier, query)) continue;
    // A lone word in code shape (`.yaml`, `v2`, `e2e`) is as specific as the word itself;
    // several words joined like code (`billing-svc`, `db:migrate`) are specific by shape.
    let shape = identifier.codeLike && identifier.words.length > 1 ? 1 : 0;
    let rarest = Infinity;
    for (const word of identifier.words) {
      if (shape < 1) shape = Math.max(shape, likeness(word));
      rarest = Math.min(rarest, holders(stem(word)));
    }
    const found = shape * rarityAmong(rarest);
    if (found > strength) [term, strength] = [identifier.text, found];
  }
  for (const [key, asked] of query.forms.words) {
    const held = reflection.words.get(key);
    if (!held) continue;
    const found = wordStrength(asked, held, likeness) * rarityAmong(holders(key));
    if (found > strength) [term, strength] = [held.written, found];
  }
  return strength > 0 ? { term, strength } : undefined;
}

/** An identifier of the request of two words or more is part of this one of the reflection's. */
function holdsAskedIdentifier(identifier: Identifier, query: NamedQuery): boolean {
  for (const asked of query.forms.identifiers) if (asked.words.length >= 2 && containsSequence(identifier.words, asked.words)) return true;
  return false;
}

function wordStrength(asked: WordForm, held: WordForm, likeness: Likeness): number {
  // A name is rare in every form it takes ("migrating" is rarer than "migration").
  const english = Math.min(likeness(asked.word), likeness(held.word));
  const named = Math.max(english, held.capitalised ? PROPER_NAME : 0);
  // A word the reflection holds only inside a path or a name: the request names a part of
  // it (a bare "rollback" for `scripts/rollback.sh`, or `src/main.rs` for `src/env.ts`).
  return held.standalone ? named : named * PART_OF_IDENTIFIER;
}

function clamp(x: number): number {
  return Math.min(1, Math.max(0, x));
}
