/**
 * Whether a proposed reflection only restates the conversation's own instructions (the
 * system prompt, the `CLAUDE.md` / `AGENTS.md` text the client puts in context): those
 * are in every request of every session anyway, so storing them costs a line of every
 * injection and teaches nothing. One user's Mem0 store was 97.8% junk, about half of it
 * the agent's own boot files said again.
 *
 * The measure is containment, not similarity: the share of a proposal's content words
 * that one passage of the instructions (one to three consecutive sentences) already
 * holds. A restatement in other words ("The user wants lint run before every commit" for
 * "Always run `npm run lint` before committing") keeps the rule's subject words and
 * changes only its directive words ("always", "wants", "must", "user"), which are not
 * counted; a lesson that extends a rule brings words the rule lacks (the error it fails
 * with, the variable to set) and falls under the bar; a new fact that shares a few words
 * with a rule is mostly words the rule lacks. Similarity would not do: a long rule and a
 * short restatement of half of it are far apart as vectors, a proposal that adds one new
 * name to a rule is close to it. Judged on words, whatever the embedder, like the
 * writer's near-duplicates (`reflection-writer.ts`).
 */
import { STOPWORDS } from '../domain/text.js';

/**
 * Share of a proposal's content words (weighted, see `wordBag`) one passage must hold for
 * the proposal to restate it. On `bench/eval/restatements.ts` (a monorepo's CLAUDE.md of
 * ten rules, and what a careless extraction model proposes from a five-task session under
 * it), restatements in other words score 0.80-1.00 and the session's lessons 0.11-0.54,
 * at most 0.25 against the real Claude Code and Codex prompts; the unit tests' closest
 * lesson (a rule plus one new flag, `--fix`) scores 0.67. Erring towards keeping, as the
 * writer does: a restatement kept costs a line, a lesson lost costs the lesson.
 */
export const RESTATEMENT_THRESHOLD = 0.75;
/** Consecutive sentences one passage spans: a rule often takes two or three, a proposal may merge them. */
const PASSAGE_UNITS = 3;

/**
 * Words that say how strongly or by whom a rule is given, not what it is about: a
 * restatement swaps them freely ("always" / "make sure" / "the user insists"). Besides
 * `STOPWORDS`.
 */
const DIRECTIVE_WORDS: ReadonlySet<string> = new Set(
  (
    'always never must should need needs needed require requires required requirement ensure sure make makes ' +
    'prefer prefers preferred want wants wanted insist insists insisted ask asks asked told tell tells say says said ' +
    'expect expects expected user users agent agents assistant model project repo repository codebase team ' +
    'instruction instructions instructed rule rules convention conventions guideline guidelines policy ' +
    'remember important importantly please don dont avoid forbidden prohibited allowed disallowed mandatory ' +
    'use uses used using instead rather whenever every each per like follow follows following ' +
    // Verbs a restatement wraps a rule in ("X goes in Y", "X is written with Y").
    'go goes went gone live lives located place placed put keep keeps kept write writes written wrote change changes done'
  ).split(' '),
);

/** What a sentence or a proposal is reduced to: its content words, stemmed, with weights. */
export type WordBag = ReadonlyMap<string, number>;

/** The instructions as the filter reads them: each unit's words, in the units' order. */
export interface InstructionIndex {
  readonly units: readonly WordBag[];
}

/** The index of `units` (sentences of the instructions, in order; `instruction-text.ts`). */
export function instructionIndex(units: readonly string[]): InstructionIndex {
  return { units: units.map(wordBag) };
}

/**
 * The content words of `text`: lowercased, split on anything but letters and digits (so
 * `config/payments.yaml` is three words), stopwords and directive words left out, each
 * stemmed. A word weighs 2 when it comes from a name (a token with a digit, or with `-`,
 * `_`, `.`, `/`, `=` or `:` inside, like `--fix`, `DEPLOY_ENV`, `src/gen`): names decide
 * what a sentence is about, and a lesson's new detail is most often one.
 */
export function wordBag(text: string): WordBag {
  const bag = new Map<string, number>();
  for (const token of text.split(/\s+/)) {
    const bare = token.replace(/^[^\p{L}\p{N}-]+|[^\p{L}\p{N}]+$/gu, '');
    const weight = /\p{N}|.[-_./=:]./u.test(bare) || bare.startsWith('-') ? 2 : 1;
    for (const word of bare.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
      if (word.length < 2 || STOPWORDS.has(word) || DIRECTIVE_WORDS.has(word)) continue;
      const stem = stemOf(word);
      if (stem.length < 2 || DIRECTIVE_WORDS.has(stem)) continue;
      bag.set(stem, Math.max(bag.get(stem) ?? 0, weight));
    }
  }
  return bag;
}

/**
 * A light suffix stripper, enough to see "tests" / "testing" / "tested" and "commit" /
 * "committing" / "commits" as one word: one inflectional ending off, then a final
 * doubled consonant and a final "e". Not a full stemmer: only equality matters here.
 */
export function stemOf(word: string): string {
  let stem = word;
  for (const suffix of ['ments', 'ment', 'ings', 'ing', 'ied', 'ies', 'ed', 'es', 's', 'ly']) {
    if (stem.endsWith(suffix) && stem.length - suffix.length >= 3) {
      stem = stem.slice(0, -suffix.length) + (suffix === 'ied' || suffix === 'ies' ? 'y' : '');
      break;
    }
  }
  if (stem.length > 3 && /([b-df-hj-np-tv-z])\1$/.test(stem)) stem = stem.slice(0, -1);
  if (stem.length > 3 && stem.endsWith('e')) stem = stem.slice(0, -1);
  return stem;
}

/**
 * The largest share (0..1) of `content`'s weighted content words that one passage of the
 * instructions holds: one to `PASSAGE_UNITS` consecutive units. 0 when the content has
 * no content word or there are no instructions.
 */
export function instructionCoverage(index: InstructionIndex, content: string): number {
  const bag = wordBag(content);
  let total = 0;
  for (const w of bag.values()) total += w;
  if (total === 0) return 0;
  let best = 0;
  const { units } = index;
  for (let start = 0; start < units.length && best < 1; start++) {
    // Only passages whose first unit shares a word are worth widening.
    if (!sharesWord(units[start], bag)) continue;
    for (let end = start + 1; end <= Math.min(units.length, start + PASSAGE_UNITS); end++) {
      let held = 0;
      for (const [stem, w] of bag) {
        for (let i = start; i < end; i++) {
          if (units[i].has(stem)) {
            held += w;
            break;
          }
        }
      }
      best = Math.max(best, held / total);
    }
  }
  return best;
}

function sharesWord(unit: WordBag, bag: WordBag): boolean {
  for (const stem of bag.keys()) if (unit.has(stem)) return true;
  return false;
}

/** Whether `content` restates the instructions: its coverage reaches `threshold`. */
export function restatesInstructions(index: InstructionIndex, content: string, threshold = RESTATEMENT_THRESHOLD): boolean {
  return index.units.length > 0 && instructionCoverage(index, content) >= threshold;
}

/**
 * `proposals` (as the extraction model gave them, unchecked) without those whose
 * `content` restates the instructions; how many were dropped. Anything without a string
 * `content` is kept for the writer to reject.
 */
export function withoutRestatements<T>(index: InstructionIndex, proposals: readonly T[]): { kept: T[]; dropped: number } {
  if (index.units.length === 0) return { kept: [...proposals], dropped: 0 };
  const kept = proposals.filter((proposal) => {
    const content = (proposal as { content?: unknown } | null)?.content;
    return typeof content !== 'string' || !restatesInstructions(index, content);
  });
  return { kept, dropped: proposals.length - kept.length };
}
