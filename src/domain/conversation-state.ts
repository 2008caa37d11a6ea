/**
 * What a conversation keeps between its turns, and the rules that change it: the state a
 * settling turn writes over the latest one (`settledState`), and the one home of its
 * extraction bookkeeping (DESIGN section 5): the watermark (`extractedTurns`) and which of
 * its jobs is the one to run. The settling steps, uploaded transcripts and the extraction
 * consumer all decide through these functions (`memory/watermark.ts` writes what they
 * decide), and nothing else reads or writes `extractedTurns` or `lastFinalAt`.
 *
 * The rules:
 * - A job covers the turns from the watermark to its `turnCount`. A history that no
 *   longer extends the one the watermark counted (compacted, rewound, a rewritten
 *   transcript) restarts it from 0: the writer drops near-duplicates of what was learnt.
 * - A newer job replaces an older one twice over: on the bus, where it takes the place of
 *   the conversation's job still waiting to settle (`supersedes`, which a bus may not
 *   honour), and in the state, whose `lastFinalAt` (the newest queued job's time) makes
 *   the consumer skip any older job it is handed.
 * - So a job is published before the state marks it queued: a crash in between leaves a
 *   job that still runs, never a mark that skips the older job for a newer one that was
 *   never published.
 * - The watermark only moves forward once a job (or a chunk of one) is extracted; a
 *   consumer handed a job re-reads it, so a redelivery resumes where the last one stopped.
 */
import type { ProtocolId } from './types.js';

/**
 * A block Engram added to one of the client's messages. Re-applied, byte for byte, on
 * every later turn so the forwarded request stays an extension of the previous one.
 */
export interface Insertion {
  /** Index of the message in the client's message list. */
  index: number;
  /** Fingerprint of the client's message it was added to (ignores `cache_control`). */
  messageHash: string;
  /** Exact text appended to that message. */
  block: string;
  /** What the block is; absent on states written before there was more than one kind. */
  kind?: InsertionKind;
  /**
   * The reflections the block shows (relevant reflections, the index's listed ones), in
   * its order: read again before each re-application (`conversation/kept-blocks.ts`).
   * Absent on blocks written before: they cannot be checked and are not re-applied.
   */
  reflections?: string[];
  /** The turn of the conversation (its `turns` then) that added the block. */
  turn?: number;
}

/** Relevant reflections; the root memory index (first turn, with Engram's tools); a reminder to use them. */
export type InsertionKind = 'reflections' | 'index' | 'reminder';

/**
 * What must outlive one request of a conversation (DESIGN section 2): kept behind the
 * control-store port so another replica, or a restarted one, continues identically.
 */
export interface ConversationState {
  agentId: string;
  id: string;
  protocol: ProtocolId;
  insertions: Insertion[];
  /** Ids of reflections the conversation already holds (injected, or shown by a `recall` result), never injected again. */
  injectedIds: string[];
  /** Extraction watermark: number of transcript turns already sent to extraction. */
  extractedTurns: number;
  /** Epoch ms of the last request in this conversation. */
  lastActivityAt: number;
  /** Epoch ms of the latest successful final answer; a pending extraction job older than it is superseded. */
  lastFinalAt: number;
  /** Client messages already considered for injection; only a newer user message gets a new block. */
  seenMessages: number;
  /** Requests of the conversation Engram relayed (the turn a block was added in is counted by it); absent: 0. */
  turns?: number;
  createdAt: number;
  /**
   * The project the conversation works in and the app's end user it is with (DESIGN
   * section 13): what it is shown and what it teaches are kept to them. Absent: none.
   */
  scope?: string;
  user?: string;
  /** Conversations learnt from uploaded transcripts: what the latest upload held. */
  upload?: TranscriptUploadMark;
}

/**
 * The latest upload of a session's transcript. Hooks re-send the whole growing file
 * every turn: an identical body is recognised by its hash, and the fingerprint tells
 * whether the turns counted last time are still the first turns of the file (appended
 * to) or the file was rewritten.
 */
export interface TranscriptUploadMark {
  /** Of the uploaded body. */
  sha256: string;
  turns: number;
  /** Fingerprint of those turns. */
  fingerprint: string;
  at: number;
}

export function newConversationState(agentId: string, id: string, protocol: ProtocolId, now: number): ConversationState {
  return {
    agentId,
    id,
    protocol,
    insertions: [],
    injectedIds: [],
    extractedTurns: 0,
    lastActivityAt: now,
    lastFinalAt: 0,
    seenMessages: 0,
    createdAt: now,
  };
}

/**
 * The conversation's state once this turn settled, applied to the latest stored state
 * (another turn, a job or an upload may have written since this request read it): this
 * turn's blocks and what it saw, unless a later turn settled first; every reflection ever
 * injected; the latest activity; the extraction bookkeeping as `markQueued` decides it.
 */
export function settledState(
  current: ConversationState | undefined,
  turn: ConversationState,
  { settledAt, compacted, queued }: { settledAt: number; compacted: boolean; queued: boolean },
): ConversationState {
  const base = current ?? turn;
  // A turn that settled after this one already wrote (this is a retried recording, or the
  // slower of two concurrent turns): its blocks and its watermark reset stand.
  const newer = current !== undefined && current.lastActivityAt > settledAt;
  const later = newer || (current !== undefined && current.seenMessages > turn.seenMessages);
  // The scope and user the latest turn resolved (a turn that states no project kept the stored one).
  const { scope: _scope, user: _user, ...rest } = base;
  const { scope, user } = newer ? base : turn;
  // The turns counted: a retried older turn does not count back.
  const turns = Math.max(base.turns ?? 0, turn.turns ?? 0);
  const blocks: ConversationState = {
    ...rest,
    ...(turns > 0 ? { turns } : {}),
    ...(scope === undefined ? {} : { scope }),
    ...(user === undefined ? {} : { user }),
    insertions: later ? base.insertions : turn.insertions,
    seenMessages: later ? base.seenMessages : turn.seenMessages,
    injectedIds: [...new Set([...base.injectedIds, ...turn.injectedIds])],
    lastActivityAt: Math.max(base.lastActivityAt, settledAt),
  };
  return markQueued(blocks, { settledAt, queued, restarted: compacted, newer });
}

/** Where a new job of the conversation starts. */
export interface PendingTurns {
  /** The first turn not yet extracted: the job's `watermark`. */
  from: number;
  /** The watermark was reset: the history no longer extends what it counted. */
  restarted: boolean;
}

/**
 * What of a conversation of `turnCount` turns is not yet extracted, as `state` says. A
 * history shorter than the watermark was compacted or rewound; `rewritten` says the same
 * of a history that changed without getting shorter (an uploaded file rewritten).
 */
export function pendingTurns(state: ConversationState | undefined, turnCount: number, { rewritten = false } = {}): PendingTurns {
  const watermark = state?.extractedTurns ?? 0;
  const restarted = rewritten || turnCount < watermark;
  return { from: restarted ? 0 : watermark, restarted };
}

/**
 * The state once a job settled at `settledAt` was published (`queued`), or once a turn
 * that queued none settled: the watermark reset when the job restarted it, unless a turn
 * that settled later already wrote (`newer`: its own reset, or its own watermark, stands).
 */
export function markQueued(
  state: ConversationState,
  { settledAt, queued, restarted, newer = false }: { settledAt: number; queued: boolean; restarted: boolean; newer?: boolean },
): ConversationState {
  return {
    ...state,
    extractedTurns: restarted && !newer ? 0 : state.extractedTurns,
    lastFinalAt: queued ? Math.max(state.lastFinalAt, settledAt) : state.lastFinalAt,
  };
}

/**
 * Every turn of a conversation of `turnCount` turns counted as extracted without a job
 * (a transcript whose session was learnt through the proxy). Never moves the watermark back.
 */
export function markAllExtracted(state: ConversationState, turnCount: number): ConversationState {
  return { ...state, extractedTurns: Math.max(state.extractedTurns, turnCount) };
}

/** What the consumer does with a job it is handed. */
export type JobTurns =
  | { skip: 'superseded by a newer job' | 'already extracted' }
  /** Extract the job's turns from `from` (a redelivery resumes after what is done). */
  | { from: number };

/** The part of `job` (its `JobHeader`: turns `firstTurn` to `turnCount`) still to extract, as the conversation's latest state says. */
export function jobTurns(state: ConversationState | undefined, job: { settledAt: number; firstTurn: number; turnCount: number }): JobTurns {
  if ((state?.lastFinalAt ?? 0) > job.settledAt) return { skip: 'superseded by a newer job' };
  const watermark = state?.extractedTurns ?? 0;
  if (watermark >= job.turnCount) return { skip: 'already extracted' };
  return { from: Math.max(job.firstTurn, watermark) };
}

/**
 * The state once a job's turns up to `upTo` (its end, or a chunk's) were extracted, or
 * `undefined` when the watermark is already there: it never moves back.
 */
export function extractedUpTo(state: ConversationState, upTo: number): ConversationState | undefined {
  return state.extractedTurns >= upTo ? undefined : { ...state, extractedTurns: upTo };
}
