/**
 * The request log in words (DESIGN section 12), one wording for every place a person reads
 * it: the dashboard's activity page and `engram requests`. Each function takes the names
 * the log stores (`ports/requests.ts`: `NothingAdded`, `KeptChange`, the rebuilt block
 * kinds), as the API spells them too; a name this release does not know (a newer server's)
 * is shown as it is named, so a reader never fails on it.
 */
import { relevanceText } from './relevance-words.js';

/** Why nothing was added to a request: a short label for a table cell, and the sentence that explains it. */
const REASONS = {
  client_chore: {
    label: 'client chore',
    sentence: "the client's own bookkeeping request (such as a session title): memory leaves it alone, nothing injected, nothing learnt",
  },
  injection_off: { label: 'injection off', sentence: "injection is off for this agent (its memory setting `inject`)" },
  no_new_input: { label: 'no new input', sentence: 'the request holds no new user input or tool result to add to' },
  nothing_to_search: { label: 'nothing to search', sentence: 'the new input holds no words to search for' },
  no_candidates: { label: 'no candidates', sentence: 'the search found no reflection this conversation may see' },
  already_held: { label: 'already held', sentence: 'the relevant reflections are already in the conversation' },
  under_bar: { label: 'under the bar', sentence: "reflections were found, but none reached this agent's bar" },
  over_budget: { label: 'over budget', sentence: "relevant reflections were found, but none fitted this agent's top_k and token budget" },
  not_reached: { label: 'not reached', sentence: 'the request ended before memory was asked (a bad body, or a step that failed)' },
} as const satisfies Record<string, { label: string; sentence: string }>;

/** Every reason the log names, in the order the port lists them. */
export const NOTHING_ADDED_REASONS = Object.keys(REASONS) as Array<keyof typeof REASONS>;

/** The bounds on answers an entry may name (the port's `AnswerLimit`), and what each means to the reader. */
const ANSWER_LIMIT_SENTENCES = {
  answer_max_bytes: 'the answer was over ENGRAM_ANSWER_MAX_BYTES: the client had all of it, memory learnt from its first part only',
  stream_max_ms: 'the answer streamed past ENGRAM_STREAM_MAX_MS and was cut there; the client was told with an error event',
  sse_max_event_bytes: 'an event of the answer was over ENGRAM_SSE_MAX_EVENT_BYTES: it was relayed, but not learnt from',
} as const satisfies Record<string, string>;

/** Every bound on answers the log names, in the order the port lists them. */
export const ANSWER_LIMITS = Object.keys(ANSWER_LIMIT_SENTENCES) as Array<keyof typeof ANSWER_LIMIT_SENTENCES>;

/** The sentence for a bound an answer met; a name this release does not know is shown as named. */
export function answerLimitSentence(limit: string): string {
  return Object.hasOwn(ANSWER_LIMIT_SENTENCES, limit) ? ANSWER_LIMIT_SENTENCES[limit as keyof typeof ANSWER_LIMIT_SENTENCES] : limit.replaceAll('_', ' ');
}

/** An entry without a reason that got nothing (logged before reasons were, issue 32) says only that. */
const NO_REASON = { label: 'no reason recorded', sentence: 'no reason was recorded for it' };

const known = (reason: string): reason is keyof typeof REASONS => Object.hasOwn(REASONS, reason);
const asNamed = (name: string): string => name.replaceAll('_', ' ');

/** A table cell's words for why nothing was added: `under the bar`, `client chore`, …; null: an older entry. */
export function reasonLabel(reason: string | null): string {
  if (reason === null) return NO_REASON.label;
  return known(reason) ? REASONS[reason].label : asNamed(reason);
}

/** The sentence that says why nothing was added to a request; null: an entry logged before reasons were. */
export function reasonSentence(reason: string | null): string {
  if (reason === null) return NO_REASON.sentence;
  return known(reason) ? REASONS[reason].sentence : asNamed(reason);
}

const BLOCKS: Record<string, string> = {
  reflections: 'the relevant reflections',
  index: 'the root memory index',
};

/** The blocks a turn rewrote, in words: `the relevant reflections and the root memory index`. */
export function rebuiltBlocksText(blocks: readonly string[]): string {
  const named = blocks.map((block) => BLOCKS[block] ?? asNamed(block));
  return named.length <= 1 ? named.join('') : `${named.slice(0, -1).join(', ')} and ${named[named.length - 1]}`;
}

/** Why a rebuilt block rewrote a turn's prompt cache: said once, beside what changed. */
export const REBUILT_NOTE = 'rewritten at their place, so this request missed the prompt cache from there on';

/** What happened to one reflection of a kept block: `superseded by ref_…`, `deleted`, … */
export function keptChangeText(change: string, replacedBy: string | null | undefined): string {
  switch (change) {
    case 'superseded':
      return replacedBy ? `superseded by ${replacedBy}, shown in its place` : 'superseded, and its replacement is not for this conversation: dropped';
    case 'deleted':
      return 'deleted: dropped, never sent again';
    case 'edited':
      return 'edited: the block shows its new text';
    case 'out_of_scope':
      return "moved out of this conversation's project or end user: dropped";
    default:
      return asNamed(change);
  }
}

/** A kept reflection's origin: `from turn 3`. */
export function keptTurnText(turn: number): string {
  return `from turn ${turn}`;
}

/** One reflection a request got, after its id or its text: `relevance 0.61, by named term "billing-svc"`. */
export function injectedText(relevance: number, why: string): string {
  return `relevance ${relevanceText(relevance)}, by ${why}`;
}

/** A candidate under the bar, after its id or its text: `relevance 0.18`. */
export function nearMissText(relevance: number): string {
  return `relevance ${relevanceText(relevance)}`;
}

/** The bar a request was judged against: `this agent's bar (min_score) was 0.20`. */
export function barText(bar: number): string {
  return `this agent's bar (min_score) was ${relevanceText(bar)}`;
}

/** The headings of what a request got, in the order every reader shows them. */
export const REQUEST_HEADINGS = {
  injected: 'Injected',
  kept: 'Kept from earlier turns',
  rebuilt: 'Rebuilt',
  nothing: 'Nothing injected',
  nearMisses: 'Closest under the bar',
} as const;

/** A listing's one cell for what a request got: `2 injected, 1 kept`, or why nothing was (`none: under the bar`). */
export function addedSummary(entry: { injected: readonly unknown[]; kept: readonly unknown[]; reason: string | null }): string {
  const kept = entry.kept.length > 0 ? `, ${entry.kept.length} kept` : '';
  return entry.injected.length > 0 ? `${entry.injected.length} injected${kept}` : `none: ${reasonLabel(entry.reason)}${kept}`;
}
