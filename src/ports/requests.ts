/**
 * The request log (DESIGN section 12): what each proxied request of an agent did, kept
 * `ENGRAM_REQUEST_LOG_DAYS`, so a user can see memory at work: which reflections went
 * into a request, how relevant each was and why, how long it took. An entry holds ids,
 * numbers, the protocol, the status and outcome, never the request's or the answer's
 * text. Every adapter passes `test/contracts/requests.contract.ts`.
 *
 * Entries are appended once each, after their request ended, by whichever replica ran it;
 * `list` gives them in the order they were appended, the latest first (a long stream that
 * ended after a short request that began later is listed before it). Pages are read with
 * an opaque cursor, which stays valid while entries are appended, pruned or deleted.
 */

/**
 * One reflection this request added (DESIGN section 12). `relevance` is the one relevance
 * scale Engram speaks everywhere: the agent's bar (`min_score`), the dashboard's search,
 * `engram reflections search` and the docs use the same number.
 */
export interface InjectedReflection {
  reflectionId: string;
  /** Its relevance (`Judged.relevance`): injected at or above the agent's bar. */
  relevance: number;
  /** The signal that made it relevant: `meaning`, `tags`, or `named term "<term>"`. */
  why: string;
}

/** A reflection re-applied from an earlier turn's block, byte for byte. */
export interface KeptReflection {
  reflectionId: string;
  /** The turn of the conversation (1 = its first request) that added it. */
  turn: number;
}

/**
 * Why a reflection of a kept block could not be re-applied as it was:
 * - `superseded`: a newer reflection replaced it (its replacement takes its place, `replacedBy`);
 * - `deleted`: it no longer exists;
 * - `edited`: its text changed (the block shows the new text);
 * - `out_of_scope`: it moved to another project or end user than the conversation's.
 */
export type KeptChange = 'superseded' | 'deleted' | 'edited' | 'out_of_scope';

export interface RebuiltReflection {
  reflectionId: string;
  change: KeptChange;
  /** The reflection shown in its place (a supersede whose replacement the conversation may see). */
  replacedBy?: string;
}

/**
 * What changed in the kept blocks this turn (null when they were re-applied as they
 * were): the blocks were rewritten at their place, so this turn costs one prompt-cache
 * miss from there on.
 */
export interface Rebuilt {
  /** The kinds of block rewritten: the relevant reflections, the root memory index. */
  blocks: Array<'reflections' | 'index'>;
  changes: RebuiltReflection[];
}

/**
 * Why nothing was added to a request (null when something was):
 * - `client_chore`: a client's own bookkeeping request (Claude Code's session title);
 * - `injection_off`: the agent's `memory.inject` is false;
 * - `no_new_input`: the request holds no new user input or tool result to add to;
 * - `nothing_to_search`: the new input holds no words to search for;
 * - `no_candidates`: the search found no reflection this conversation may see;
 * - `already_held`: the relevant ones are already in the conversation;
 * - `under_bar`: candidates were found, none reached the bar (`nearMisses`);
 * - `over_budget`: relevant ones were found, none fitted `top_k` and the token budget;
 * - `not_reached`: the turn ended before memory was asked (a bad body, a failed step).
 */
export type NothingAdded =
  | 'client_chore'
  | 'injection_off'
  | 'no_new_input'
  | 'nothing_to_search'
  | 'no_candidates'
  | 'already_held'
  | 'under_bar'
  | 'over_budget'
  | 'not_reached';

/**
 * Which of Engram's bounds on an answer the request met (null: none):
 * - `answer_max_bytes`: the answer's text was over `ENGRAM_ANSWER_MAX_BYTES`; the client had
 *   all of it, the turn was learnt from its first that many bytes;
 * - `stream_max_ms`: the answer streamed past `ENGRAM_STREAM_MAX_MS` and was cut there, the
 *   client told with the protocol's error event (`stream_time_limit`);
 * - `sse_max_event_bytes`: an event of the answer was over `ENGRAM_SSE_MAX_EVENT_BYTES`: the
 *   client had it (over HTTP), the turn was not learnt from.
 */
export type AnswerLimit = 'answer_max_bytes' | 'stream_max_ms' | 'sse_max_event_bytes';

/** A candidate under the bar: how close it came. */
export interface NearMiss {
  reflectionId: string;
  relevance: number;
}

export interface RequestEntry {
  /** `req_…`, the `x-engram-request-id` the client got. */
  id: string;
  agentId: string;
  /** When its turn started, its body read (ms since the epoch, Engram's clock). */
  at: number;
  /** The protocol adapter's id: `chat-completions`, `messages`, `responses`. */
  protocol: string;
  /** The conversation it was found to belong to; null when the turn ended before that (a bad body). */
  conversationId: string | null;
  /** The HTTP status the client got; null when none was sent (the client left first). */
  status: number | null;
  /** How the turn ended (`completed`, `upstream_error`, `failed`, `interrupted`, …). */
  outcome: string;
  /** From the turn's start (its body read) to the end of its answer, in ms to a tenth. */
  latencyMs: number;
  /** From the upstream request's start to the end of its answer; null when it was never sent. */
  upstreamMs: number | null;
  /** What this turn added. */
  injected: InjectedReflection[];
  /** What was re-applied from earlier turns (the relevant-reflections blocks). */
  kept: KeptReflection[];
  /** What changed in the kept blocks, or null. */
  rebuilt: Rebuilt | null;
  /** Why nothing was added; null when something was. */
  reason: NothingAdded | null;
  /** The agent's bar (`min_score`) when retrieval ran; null when it did not. */
  bar: number | null;
  /** When nothing was added for `under_bar`: the best three candidates under the bar, best first. */
  nearMisses: NearMiss[];
  /** The project the request was seen in (DESIGN section 13); null when it stated none. */
  scope: string | null;
  /** The app's end user it came from (`x-engram-user`); null for the agent's own traffic. */
  user: string | null;
  /** The bound on answers it met, if any; null on entries logged before these were. */
  answerLimit: AnswerLimit | null;
}

/** Which entries a listing keeps (all of them when empty); a page holds `limit` entries that match. */
export interface RequestFilter {
  conversationId?: string;
  /** How the turn ended (`RequestEntry.outcome`). */
  outcome?: string;
  /**
   * true: only requests to which nothing was added (`injected` empty: `reason` says why,
   * on every entry logged since reasons are); false: only those that got something.
   */
  nothingAdded?: boolean;
}

export interface RequestPage {
  /** Latest first, at most the limit asked for. */
  entries: RequestEntry[];
  /** Give it back as `cursor` for the next (older) page; absent on the last page. */
  cursor?: string;
}

export interface RequestLog {
  /** Stores one entry (its id is new: ids are random). */
  append(entry: RequestEntry): Promise<void>;
  /**
   * The agent's entries, latest first, `limit` (1 or more) at most, older than the page
   * `cursor` came with. A cursor that this store did not make rejects with
   * `EngramError('invalid_request')`.
   */
  list(agentId: string, options: { limit: number; cursor?: string } & RequestFilter): Promise<RequestPage>;
  /** One of the agent's entries; undefined when absent, pruned, or another agent's. */
  get(agentId: string, id: string): Promise<RequestEntry | undefined>;
  /** Forgets every agent's entries whose `at` is before `before`; returns how many. */
  prune(before: number): Promise<number>;
  /** Forgets the agent's entries (the agent was deleted). */
  deleteAgent(agentId: string): Promise<void>;
  close(): Promise<void>;
}
