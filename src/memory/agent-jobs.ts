/**
 * One agent's memory jobs on the bus, by state, as the management API (`/jobs`,
 * `/dead-letters`) and the dashboard's activity page show them: extraction jobs (a
 * conversation's new turns) and tagging jobs (its reflections stored without tags), each
 * labelled with its kind; and the retry of one of its dead letters, which never reaches
 * another agent's job.
 */
import type { DeadLetter, EventBus, QueuedMessage } from '../ports/index.js';
import { QUEUED_LIMIT } from '../ports/event-bus.js';
import { EXTRACTION_SUBJECT, type ExtractionJob } from './extraction-job.js';
import { TAGGING_SUBJECT } from './tagging-job.js';

/** What a memory job does: learn from a conversation, or tag reflections stored without tags. */
export type JobKind = 'extraction' | 'tagging';

/** The bus subject of each kind of memory job: the views, the logs and the metrics label them by it. */
export const JOB_SUBJECTS: Readonly<Record<JobKind, string>> = { extraction: EXTRACTION_SUBJECT, tagging: TAGGING_SUBJECT };

/** The kind of a stored message or dead letter, by its subject; undefined for any other subject. */
export function jobKind(subject: string): JobKind | undefined {
  return (Object.keys(JOB_SUBJECTS) as JobKind[]).find((kind) => JOB_SUBJECTS[kind] === subject);
}

export interface AgentJobs {
  /** Waiting for the conversation to settle (or a tagging job for its interval), or ready to run. */
  queued: QueuedMessage[];
  /** Delivered to a worker now. */
  running: QueuedMessage[];
  /** Failed, to be retried. */
  failed: QueuedMessage[];
  dead: DeadLetter[];
  /** The bus listed its most (`QUEUED_LIMIT`) of a kind: some of the agent's jobs may be missing. */
  truncated: boolean;
}

/** Only this agent's jobs (an unreadable payload belongs to nobody). */
export function ofAgent(payload: unknown, agentId: string): boolean {
  return (payload as Partial<ExtractionJob> | null)?.agentId === agentId;
}

export async function agentJobs(bus: EventBus, agentId: string): Promise<AgentJobs> {
  const [extraction, tagging, dead] = await Promise.all([bus.queued(EXTRACTION_SUBJECT), bus.queued(TAGGING_SUBJECT), agentDeadLetters(bus, agentId)]);
  const mine = [...extraction, ...tagging].filter((message) => ofAgent(message.payload, agentId)).sort((a, b) => a.publishedAt - b.publishedAt);
  const inState = (...states: QueuedMessage['state'][]) => mine.filter((message) => states.includes(message.state));
  return {
    queued: inState('waiting', 'ready'),
    running: inState('delivered'),
    failed: inState('retrying'),
    dead,
    truncated: extraction.length >= QUEUED_LIMIT || tagging.length >= QUEUED_LIMIT,
  };
}

/** The agent's dead letters of either kind, oldest failure first. */
export async function agentDeadLetters(bus: EventBus, agentId: string): Promise<DeadLetter[]> {
  return (await bus.deadLetters()).filter((dead) => jobKind(dead.subject) !== undefined && ofAgent(dead.payload, agentId));
}

/** Retries the agent's dead letter `id`; false when the agent has no such dead letter. */
export async function retryAgentDeadLetter(bus: EventBus, agentId: string, id: string): Promise<boolean> {
  return (await agentDeadLetters(bus, agentId)).some((dead) => dead.id === id) && (await bus.retryDeadLetter(id));
}
