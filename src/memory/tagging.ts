/**
 * The tagging job's consumer (DESIGN section 8): reflections no one has tagged are shown
 * to the agent's extraction model, a batch at a time, with the paragraph extraction writes
 * tags by, and get the tags it gives. Tags are the main semantic signal of the offline
 * search (`domain/reflection-text.ts`): a reflection without them is found by its own
 * words only. At-least-once delivery makes every step safe to repeat: a reflection tagged
 * once leaves the work list (`tagsBy` is set), so a redelivery takes the next ones.
 */
import type { Reflection } from '../domain/types.js';
import { embeddingText, subjectTags } from '../domain/reflection-text.js';
import type { ForcedTool } from '../protocols/types.js';
import type { BusMessage, Embedder, ReflectionStore, Subscription } from '../ports/index.js';
import type { Control } from '../control/control.js';
import { extractionConsumerOptions } from './extraction-job.js';
import { reflectionsIn, reflectionsSchema, TAGS_PROPERTY } from './extraction-tool.js';
import { renderReflectionLines } from './reflection-lines.js';
import { validTags } from './reflection-writer.js';
import { rebuildRootIndex } from './root-index.js';
import { TAGGING_INSTRUCTIONS } from './tagging-instructions.js';
import {
  TAGGING_BATCH,
  TAGGING_CALLS_PER_JOB,
  TAGGING_SUBJECT,
  publishTaggingJob,
  type TaggingJob,
  type TaggingSchedule,
} from './tagging-job.js';
import { jobFailure, type JobFailureObserver } from './job-failure.js';
import { DONE, memoryJobHandler, type JobLog, type MemoryJob, type MemoryJobDeps } from './memory-job.js';
import { isJobPayload } from './job-payload.js';

export { TAGGING_INSTRUCTIONS } from './tagging-instructions.js';
export * from './tagging-job.js';

export const RECORD_TAGS_TOOL = 'record_tags';

/** The forced tool of a tagging call: `{ reflections: [{ id, tags }] }`, strict-compatible. */
export const RECORD_TAGS: ForcedTool = {
  name: RECORD_TAGS_TOOL,
  description: 'Record the tags of each reflection shown, by its id. Call it once.',
  schema: reflectionsSchema({ id: { type: 'string', description: 'The reflection\'s id, as in its [id].' }, tags: TAGS_PROPERTY }),
};

/** Pino-compatible: structured fields first. Never given a reflection's text or a secret. */
export type TaggingLog = JobLog;

/**
 * How one tagging call ended: its answer read, failed (the job is retried), refused for
 * good (dead-lettered), or answered without a `record_tags` call (the batch is left
 * untagged, the job ends).
 */
export type TaggingCallOutcome = 'ok' | 'failed' | 'refused' | 'no_tool_call';

/** Told what the job did, and why it failed, for the metrics. */
export interface TaggingObserver extends JobFailureObserver {
  taggingCall(outcome: TaggingCallOutcome): void;
  /** Reflections the job wrote tags to (not those the model gave none). */
  reflectionsTagged(count: number): void;
}

/** The skeleton's (`memory-job.ts`), with the schedule's clock. */
export interface TaggingDeps extends Omit<MemoryJobDeps, 'now'> {
  control: Control;
  reflections: ReflectionStore;
  embedder: Embedder;
  /** Where the next job is queued when reflections still wait after this one; a deferred job too. */
  schedule: TaggingSchedule;
  log?: TaggingLog;
  observer?: TaggingObserver;
}

/** What one call did to the reflections it showed. */
interface Applied {
  /** Given tags, stored with `tagsBy: 'tagging'`. */
  tagged: number;
  /** Given none: stored with `tagsBy: 'tagging'` all the same, so they are not shown again. */
  untagged: number;
  /** Tagged, changed or deleted by another writer since they were listed: left alone. */
  skipped: number;
  /** Entries of the answer naming a reflection the call did not show. */
  ignored: number;
}

/**
 * The handler for `TAGGING_SUBJECT`, on the skeleton of `memory-job.ts`, as extraction's.
 * Acks without a call when nothing waits for tags; else up to `TAGGING_CALLS_PER_JOB`
 * calls, each showing the `TAGGING_BATCH` reflections waiting longest, and the next job is
 * queued for the next interval if some still wait. A model that answers without calling
 * `record_tags` gave no tags, and asking again would spend tokens on the same answer at
 * every interval while the dead letters fill (tags are a bonus: a reflection is still
 * found by its words). So that batch is stored untagged (`tagsBy: 'tagging'`, not shown
 * again), one warning line says so, and the job ends, acked.
 */
export function createTaggingHandler(deps: TaggingDeps): (message: BusMessage<TaggingJob>) => Promise<void> {
  return memoryJobHandler(tagging(deps), { ...deps, now: deps.schedule.now });
}

function tagging(deps: TaggingDeps): MemoryJob<TaggingJob> {
  return {
    kind: 'tagging',
    isPayload: isJobPayload,
    async run({ payload: job, agent, fields, log, ...call }) {
      const upstream = await call.upstream();
      if ('end' in upstream) return upstream;
      const { model } = upstream;

      const started = deps.schedule.now();
      const total: Applied & { calls: number; shown: number } = { calls: 0, shown: 0, tagged: 0, untagged: 0, skipped: 0, ignored: 0 };
      /** The model answered without calling `record_tags`: no further call this job. */
      let refusedTool = false;
      for (let round = 0; round < TAGGING_CALLS_PER_JOB && !refusedTool; round++) {
        const batch = await deps.reflections.list(agent.id, { needsTags: true, oldestFirst: true, limit: TAGGING_BATCH });
        if (batch.length === 0) break;
        const until = await call.budgetSpent();
        if (until !== undefined) {
          if (total.tagged + total.untagged > 0) await rebuildRootIndex(agent.id, deps);
          // One deferred job per agent and day, however many deliveries defer it.
          return { end: 'defer', until, bus: deps.schedule.bus, subject: TAGGING_SUBJECT, job, key: job.agentId, fields: { ...total } };
        }
        total.calls++;
        total.shown += batch.length;
        let answer: ReturnType<typeof tagsGiven> = { given: new Map(), ignored: 0 };
        try {
          answer = tagsGiven(await call.ask(upstream, TAGGING_INSTRUCTIONS, renderReflectionLines('reflections', batch), RECORD_TAGS), batch);
          deps.observer?.taggingCall('ok');
        } catch (error) {
          const failure = jobFailure(error);
          if (failure.reason !== 'no_tool_call') {
            deps.observer?.taggingCall(failure.permanent ? 'refused' : 'failed');
            throw failure;
          }
          // The batch is stored untagged below (given nothing), said once here.
          deps.observer?.taggingCall('no_tool_call');
          deps.observer?.jobFailed('tagging', failure.reason);
          log.warn({ ...fields, model, reflections: batch.length, reason: failure.message }, 'tagging: the model answered without calling record_tags; these reflections stay untagged');
          refusedTool = true;
        }
        const applied = await apply(deps, agent.id, batch, answer.given);
        applied.ignored = answer.ignored;
        for (const key of ['tagged', 'untagged', 'skipped', 'ignored'] as const) total[key] += applied[key];
        if (applied.tagged > 0) deps.observer?.reflectionsTagged(applied.tagged);
      }
      // One rebuild for the job: the index lists content, and a reflection tagged moved up the order.
      if (total.tagged + total.untagged > 0) await rebuildRootIndex(agent.id, deps);
      const more = !refusedTool && total.calls === TAGGING_CALLS_PER_JOB && (await deps.reflections.list(agent.id, { needsTags: true, limit: 1 })).length > 0;
      // Before the ack: a crash in between repeats this job (it takes the next batch), never loses the next one.
      if (more) await publishTaggingJob(deps.schedule, job);
      log.info({ ...fields, model, ...total, more, ms: deps.schedule.now() - started }, total.calls === 0 ? 'tagging skipped' : 'tagging done');
      return DONE;
    },
  };
}

/**
 * The tags the answer gives each reflection shown, through the writer's validation;
 * entries for any other id are ignored (counted), a repeated id keeps its first tags. A
 * missing list is an error worth a retry, as extraction's.
 */
function tagsGiven(args: unknown, shown: readonly Reflection[]): { given: Map<string, string[]>; ignored: number } {
  const ids = new Set(shown.map((reflection) => reflection.id));
  const given = new Map<string, string[]>();
  let ignored = 0;
  for (const entry of reflectionsIn(args, RECORD_TAGS_TOOL)) {
    const { id, tags } = (typeof entry === 'object' && entry !== null ? entry : {}) as { id?: unknown; tags?: unknown };
    if (typeof id !== 'string' || !ids.has(id)) ignored++;
    else if (!given.has(id)) given.set(id, validTags(tags));
  }
  return { given, ignored };
}

/**
 * Stores what was given: each reflection keeps its tags (Engram's marks among them) and
 * gains the new subject tags up to the cap, with `tagsBy: 'tagging'` (also when the model
 * gave none, so it is not shown again), re-embedded from its content and tags. A person's
 * or the agent's tags win: each reflection is read again just before its update, and one
 * that someone tagged, changed or deleted since it was listed is left alone (a changed
 * one still untagged is shown again by a later job). Nothing is awaited between that read
 * and the update but the update itself; on SQLite no other write can come between them,
 * on Weaviate a write landing in that one round trip is overwritten.
 */
async function apply(deps: TaggingDeps, agentId: string, shown: readonly Reflection[], given: ReadonlyMap<string, string[]>): Promise<Applied> {
  const planned = shown.map((reflection) => {
    const tags = validTags([...reflection.tags, ...(given.get(reflection.id) ?? [])]);
    const text = embeddingText({ content: reflection.content, tags });
    return { reflection, tags, text, added: subjectTags(tags).length > subjectTags(reflection.tags).length, reembed: text !== embeddingText(reflection) };
  });
  // One embedding call for the batch, made before any update: nothing slow between a re-read and its write.
  const toEmbed = planned.filter((plan) => plan.reembed);
  const vectors = toEmbed.length > 0 ? await deps.embedder.embed(toEmbed.map((plan) => plan.text)) : [];
  const vectorOf = new Map(toEmbed.map((plan, index) => [plan.reflection.id, vectors[index]]));
  const applied: Applied = { tagged: 0, untagged: 0, skipped: 0, ignored: 0 };
  for (const { reflection, tags, added } of planned) {
    const current = await deps.reflections.get(agentId, reflection.id);
    if (!current || current.tagsBy !== undefined || current.supersededBy !== undefined || !unchanged(current, reflection)) {
      applied.skipped++;
      continue;
    }
    const vector = vectorOf.get(reflection.id);
    await deps.reflections.update(agentId, reflection.id, {
      tags,
      tagsBy: 'tagging',
      ...(vector ? { vector, embedderId: deps.embedder.id } : {}),
    });
    applied[added ? 'tagged' : 'untagged']++;
  }
  return applied;
}

/** The reflection still says what the model was shown, with the tags the new ones were merged into. */
function unchanged(current: Reflection, shown: Reflection): boolean {
  return current.content === shown.content && current.tags.length === shown.tags.length && current.tags.every((tag, index) => tag === shown.tags[index]);
}

/** Subscribes `handler` to the tagging subject with the extraction's delivery limits and backoff. */
export function consumeTaggingJobs(
  bus: TaggingSchedule['bus'],
  handler: (message: BusMessage<TaggingJob>) => Promise<void>,
  config: { ackWaitMs: number; maxDeliver: number; concurrency: number },
): Subscription {
  return bus.consume<TaggingJob>(TAGGING_SUBJECT, handler, extractionConsumerOptions(config));
}
