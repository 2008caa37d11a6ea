/**
 * `engram jobs`: what an agent's memory is waiting for. Learning is not immediate: a
 * conversation is extracted once it has been quiet for the settle time, so a user who
 * has just talked to an agent sees here that a job is queued and when it runs, and why a
 * failed one failed. Tagging jobs (reflections stored without tags get them) are listed
 * beside, as source `tagging`.
 */
import { agentPath, AGENT_OPTIONS, type Command, type Io } from '../command.js';
import type { ApiClient } from '../api-client.js';
import { ApiError } from '../errors.js';
import { printResult, printTable, shortTime } from '../output.js';
import { jobSource, type DeadLetterJson } from './dead-letters.js';

interface JobJson {
  id: string;
  /** `extraction` or `tagging` (absent from older servers: extraction). */
  kind?: string;
  conversation_id: string | null;
  /** Null for a tagging job. */
  source: string | null;
  turns: number | null;
  published_at: string;
  due_at: string | null;
  attempts: number | null;
  /** Why its last delivery failed (absent from older servers). */
  last_error?: string | null;
}

export interface JobsJson {
  agent_id: string;
  settle_ms: number;
  /** Absent from older servers. */
  tagging_interval_ms?: number;
  next_due_at: string | null;
  queued: JobJson[];
  running: JobJson[];
  failed: JobJson[];
  dead: DeadLetterJson[];
  truncated: boolean;
}

/** `in 12 s`, `in 3 min`, `now`: how long until an instant, from this machine's clock. */
export function until(iso: string | null, now = Date.now()): string {
  if (iso === null) return 'now';
  const seconds = Math.round((Date.parse(iso) - now) / 1000);
  if (seconds <= 0) return 'now';
  if (seconds < 120) return `in ${seconds} s`;
  if (seconds < 7200) return `in ${Math.round(seconds / 60)} min`;
  return `at ${shortTime(iso)}`;
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

/**
 * One line about learning in progress, for `reflections list`; undefined when nothing is
 * queued, running or failing (or the jobs cannot be read).
 */
export async function learningLine(api: ApiClient, agent: string): Promise<string | undefined> {
  let jobs: JobsJson;
  try {
    jobs = await api.get<JobsJson>(`${agent}/jobs`);
  } catch (error) {
    // The list itself was answered; a server without this endpoint, or a queue that
    // cannot be read just now, leaves out the extra line rather than fail the command.
    if (error instanceof ApiError) return undefined;
    throw error;
  }
  const parts: string[] = [];
  const conversations = jobs.queued.filter((job) => job.kind !== 'tagging');
  if (conversations.length > 0) {
    parts.push(
      `${conversations.length} conversation${conversations.length === 1 ? '' : 's'} queued to be learnt, next ${until(nextDue(conversations))} ` +
        `(once quiet for ${seconds(jobs.settle_ms)}, ENGRAM_SETTLE_MS)`,
    );
  }
  const tagging = jobs.queued.find((job) => job.kind === 'tagging');
  if (tagging) parts.push(`reflections without tags to be tagged ${until(tagging.due_at)}`);
  if (jobs.running.length > 0) parts.push(`${jobs.running.length} being learnt now`);
  if (jobs.failed.length > 0) parts.push(`${jobs.failed.length} failed, to be retried`);
  if (jobs.dead.length > 0) parts.push(`${jobs.dead.length} failed for good (engram dead-letters list)`);
  return parts.length === 0 ? undefined : `Learning: ${parts.join('; ')}. Watch with \`engram jobs\`.`;
}

/** The soonest due time of `jobs` (null: one may run now). */
function nextDue(jobs: JobJson[]): string | null {
  if (jobs.some((job) => job.due_at === null)) return null;
  return jobs.map((job) => job.due_at!).sort()[0] ?? null;
}

/**
 * Why a job's last delivery failed, for its WHEN column: `; attempt 2 failed: <why>`
 * (the attempt left out where the engine does not count them); empty when none has.
 */
export function lastFailure(job: Pick<JobJson, 'attempts' | 'last_error'>, failedAttempt: number | null): string {
  if (!job.last_error) return '';
  return `; ${failedAttempt ? `attempt ${failedAttempt}` : 'the last attempt'} failed: ${job.last_error}`;
}

function printJobs(io: Io, jobs: JobsJson): void {
  const row = (state: string, job: JobJson | DeadLetterJson, when: string) => [state, job.id, jobSource(job), job.conversation_id ?? '', job.turns ?? '', when];
  const running = (job: JobJson) =>
    (job.attempts && job.attempts > 1 ? `attempt ${job.attempts}` : 'since ' + shortTime(job.published_at)) + lastFailure(job, job.attempts ? job.attempts - 1 : null);
  const rows = [
    ...jobs.queued.map((job) => row('queued', job, `runs ${until(job.due_at)}`)),
    ...jobs.running.map((job) => row('running', job, running(job))),
    ...jobs.failed.map((job) => row('failed', job, `attempt ${(job.attempts ?? 0) + 1} ${until(job.due_at)}${lastFailure(job, job.attempts)}`)),
    ...jobs.dead.map((dead) => row('dead', dead, `${shortTime(dead.failed_at)}: ${dead.reason}`)),
  ];
  io.out(`A conversation is learnt once it has been quiet for ${seconds(jobs.settle_ms)} (ENGRAM_SETTLE_MS).`);
  if (jobs.tagging_interval_ms !== undefined && [...jobs.queued, ...jobs.running, ...jobs.failed, ...jobs.dead].some((job) => job.kind === 'tagging')) {
    io.out(`Reflections without tags are tagged in the background, one job (up to 40) every ${seconds(jobs.tagging_interval_ms)} at most (ENGRAM_TAGGING_INTERVAL_MS).`);
  }
  printTable(io, ['STATE', 'ID', 'SOURCE', 'CONVERSATION', 'TURNS', 'WHEN'], rows, 'No extraction jobs: nothing is waiting to be learnt.');
  if (jobs.truncated) io.out('(the queue holds more jobs than one listing reads: this list may be incomplete)');
}

export const jobsCommand: Command = {
  path: ['jobs'],
  synopsis: '--org NAME_OR_ID --agent NAME_OR_ID [--json]',
  summary: "An agent's extraction and tagging jobs: queued (and when they run), running, failed and dead",
  remote: true,
  options: AGENT_OPTIONS,
  async run(context) {
    const jobs = await context.api().get<JobsJson>(`${agentPath(context)}/jobs`);
    printResult(context, jobs, () => printJobs(context.io, jobs));
  },
};
