/**
 * The one home of a conversation's extraction bookkeeping (DESIGN section 5): what of
 * the conversation is not yet extracted (the watermark, `extractedTurns`), and which of
 * its jobs is the one to run (a newer job replaces an older one). The proxy's settling
 * steps, the Responses WebSocket (the same steps), uploaded transcripts and the
 * extraction consumer all decide through these functions, and nothing else reads or
 * writes `extractedTurns` or `lastFinalAt`.
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
import { newConversationState, type ConversationState } from '../domain/conversation-state.js';
import type { EventBus, PublishOptions } from '../ports/index.js';
import type { Control } from '../control/control.js';
import { EXTRACTION_SUBJECT, type ExtractionJob, type JobHeader, type QueuedExtractionJob } from './extraction-job.js';

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

/**
 * Publishes `job` for delivery once the conversation has been quiet for `settleMs`, in
 * place of the conversation's job still waiting (it covers fewer turns). The message id
 * includes the settle time: a newer final answer's job must always be queued, never
 * deduplicated away; the id only makes a re-publish of the very same job a no-op.
 *
 * `supersede: false` for a job published again later (a retried recording): a newer job
 * of the conversation may wait by then, and it must not be the one replaced.
 */
export async function publishJob(bus: EventBus, job: QueuedExtractionJob, settleMs: number, { supersede = true } = {}): Promise<void> {
  const options: PublishOptions = {
    notBefore: job.settledAt + settleMs,
    msgId: `${job.agentId}/${job.conversationId}/${job.turnCount}/${job.settledAt}`,
    ...(supersede ? { supersedes: `${job.agentId}/${job.conversationId}` } : {}),
  };
  await bus.publish(EXTRACTION_SUBJECT, job, options);
}

/**
 * Publishes `job`, handed over as bus message `from`, again for delivery at `until` (the
 * agent's daily budget is spent): the caller acks `from` once this resolves, so a crash in
 * between leaves the job twice (the second finds it extracted), never not at all. It keeps
 * its `settledAt`, so a newer job of the conversation still replaces it; it supersedes
 * nothing itself (a newer job waiting must not be the one replaced). The message id names
 * the day it waits for: a redelivered `from` deferred again is stored once, not twice.
 */
export async function deferJob(bus: EventBus, job: ExtractionJob, { until, from }: { until: number; from: string }): Promise<void> {
  const deferred: ExtractionJob = { ...job, deferred: { until, from } };
  await bus.publish(EXTRACTION_SUBJECT, deferred, {
    notBefore: until,
    msgId: `${job.agentId}/${job.conversationId}/${job.turnCount}/${job.settledAt}/until-${until}`,
  });
}

/** What the consumer does with a job it is handed. */
export type JobTurns =
  | { skip: 'superseded by a newer job' | 'already extracted' }
  /** Extract the job's turns from `from` (a redelivery resumes after what is done). */
  | { from: number };

/** The part of `job` still to extract, as the conversation's latest state says. */
export function jobTurns(state: ConversationState | undefined, job: JobHeader): JobTurns {
  if ((state?.lastFinalAt ?? 0) > job.settledAt) return { skip: 'superseded by a newer job' };
  const watermark = state?.extractedTurns ?? 0;
  if (watermark >= job.turnCount) return { skip: 'already extracted' };
  return { from: Math.max(job.firstTurn, watermark) };
}

/**
 * Moves the watermark to `upTo` (the job's end, or a chunk's) once extracted, by a
 * revision-checked update: fields another request changes meanwhile (insertions,
 * activity) are kept, and the watermark never moves back.
 */
export async function markExtracted(control: Control, job: JobHeader, upTo: number, now: number): Promise<void> {
  await control.updateConversation(job.agentId, job.conversationId, (current) => {
    const state = current ?? newConversationState(job.agentId, job.conversationId, job.protocol, now);
    return state.extractedTurns >= upTo ? undefined : { ...state, extractedTurns: upTo };
  });
}
