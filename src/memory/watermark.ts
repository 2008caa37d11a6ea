/**
 * A conversation's extraction jobs on the bus, and its watermark moved once one is done:
 * the writes of the bookkeeping whose rules are `domain/conversation-state.ts`. A job is
 * published before the state marks it queued (`markQueued`): a crash in between leaves a
 * job that still runs, never a mark that skips the older job for a newer one that was
 * never published.
 */
import { extractedUpTo, newConversationState } from '../domain/conversation-state.js';
import type { EventBus } from '../ports/index.js';
import type { Control } from '../control/control.js';
import { EXTRACTION_SUBJECT, type JobHeader, type QueuedExtractionJob } from './extraction-job.js';

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
  await bus.publish(EXTRACTION_SUBJECT, job, {
    notBefore: job.settledAt + settleMs,
    msgId: jobMessageId(job),
    ...(supersede ? { supersedes: `${job.agentId}/${job.conversationId}` } : {}),
  });
}

/** The message id of `job`'s publish: a re-publish of the very same job is a no-op; a deferred one adds the day. */
export function jobMessageId(job: JobHeader): string {
  return `${job.agentId}/${job.conversationId}/${job.turnCount}/${job.settledAt}`;
}

/**
 * Moves the watermark to `upTo` (the job's end, or a chunk's) once extracted, by a
 * revision-checked update: fields another request changes meanwhile (insertions,
 * activity) are kept, and the watermark never moves back.
 */
export async function markExtracted(control: Control, job: JobHeader, upTo: number, now: number): Promise<void> {
  await control.updateConversation(job.agentId, job.conversationId, (current) =>
    extractedUpTo(current ?? newConversationState(job.agentId, job.conversationId, job.protocol, now), upTo),
  );
}
