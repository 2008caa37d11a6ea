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
  /** SHA-256 of the uploaded body. */
  sha256: string;
  /** Turns the upload held. */
  turns: number;
  /** Fingerprint of those turns. */
  fingerprint: string;
  at: number;
}

export function newConversationState(
  agentId: string,
  id: string,
  protocol: ProtocolId,
  now: number,
): ConversationState {
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
