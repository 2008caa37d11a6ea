/**
 * What travels on the tagging subject (DESIGN section 8), and when. Reflections stored
 * without tags (written by hand, remembered without them, imported, learnt before tags
 * existed) get them from the agent's upstream, in the background. Only a conversation
 * tells which protocol and model an agent's upstream speaks, so the extraction handler
 * queues the job after each of the agent's extraction jobs, when a reflection waits.
 *
 * Cost is bounded per agent: jobs are slotted, at most one per `intervalMs` (5 minutes by
 * default, `ENGRAM_TAGGING_INTERVAL_MS`), each making at most `TAGGING_CALLS_PER_JOB`
 * calls of `TAGGING_BATCH` reflections: 40 reflections per 5 minutes, 480 an hour, however
 * often the agent's conversations settle. A backlog (an import) is worked through at that
 * rate, each job queueing the next while reflections still wait. Failed calls are retried
 * with the extraction's backoff, and count on top.
 */
import type { EventBus, ReflectionStore } from '../ports/index.js';
import type { JobPayload } from './job-payload.js';

export const TAGGING_SUBJECT = 'engram.tagging';

/** Reflections one tagging call is shown. */
export const TAGGING_BATCH = 20;
/** Calls one job makes at most; reflections still waiting after them wait for the next job. */
export const TAGGING_CALLS_PER_JOB = 2;
/** Its `protocol` is the conversation's that queued it: the one the agent's upstream speaks. */
export type TaggingJob = JobPayload;

/** Where tagging jobs are queued and how far apart an agent's jobs are. */
export interface TaggingSchedule {
  bus: EventBus;
  /** At most one job per agent in each interval of this length (ms). */
  intervalMs: number;
  now: () => number;
}

/**
 * Queues the agent's tagging job for the start of the next interval. The message id names
 * the agent and that interval, so every publish for the agent until then (one per
 * extraction, a job's follow-up) is the same job: the SQLite queue drops a publish whose
 * id is still stored, and the job is stored until its interval starts; NATS drops it
 * within its dedup window, which `main.ts` keeps at least one interval long. Once the job
 * has run, its interval has begun, and the next publish names the one after.
 */
export async function publishTaggingJob(schedule: TaggingSchedule, job: TaggingJob): Promise<void> {
  const slot = Math.floor(schedule.now() / schedule.intervalMs) + 1;
  await schedule.bus.publish(TAGGING_SUBJECT, job, { notBefore: slot * schedule.intervalMs, msgId: `${job.agentId}/${slot}` });
}

/**
 * Queues the agent's tagging job when one of its current reflections has no tag author
 * (`ListQuery.needsTags`); true when it did. Called by the extraction handler once a job
 * of the agent is done.
 */
export async function requestTagging(schedule: TaggingSchedule & { reflections: ReflectionStore }, job: TaggingJob): Promise<boolean> {
  const waiting = await schedule.reflections.list(job.agentId, { needsTags: true, limit: 1 });
  if (waiting.length === 0) return false;
  await publishTaggingJob(schedule, job);
  return true;
}

