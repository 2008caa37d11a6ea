/**
 * One agent's extraction jobs on the bus, by state, as the management API (`/jobs`,
 * `/dead-letters`) and the dashboard's activity page show them; and the retry of one of
 * its dead letters, which never reaches another agent's job.
 */
import type { DeadLetter, EventBus, QueuedMessage } from '../ports/index.js';
import { QUEUED_LIMIT } from '../ports/event-bus.js';
import { EXTRACTION_SUBJECT, type ExtractionJob } from './extraction-job.js';

export interface AgentJobs {
  /** Waiting for the conversation to settle, or ready to run. */
  queued: QueuedMessage[];
  /** Delivered to an extractor now. */
  running: QueuedMessage[];
  /** Failed, to be retried. */
  failed: QueuedMessage[];
  dead: DeadLetter[];
  /** The bus listed its most (`QUEUED_LIMIT`): some of the agent's jobs may be missing. */
  truncated: boolean;
}

/** Only this agent's extraction jobs (an unreadable payload belongs to nobody). */
export function ofAgent(payload: unknown, agentId: string): boolean {
  return (payload as Partial<ExtractionJob> | null)?.agentId === agentId;
}

export async function agentJobs(bus: EventBus, agentId: string): Promise<AgentJobs> {
  const [stored, dead] = await Promise.all([bus.queued(EXTRACTION_SUBJECT), agentDeadLetters(bus, agentId)]);
  const mine = stored.filter((message) => ofAgent(message.payload, agentId));
  const inState = (...states: QueuedMessage['state'][]) => mine.filter((message) => states.includes(message.state));
  return { queued: inState('waiting', 'ready'), running: inState('delivered'), failed: inState('retrying'), dead, truncated: stored.length >= QUEUED_LIMIT };
}

export async function agentDeadLetters(bus: EventBus, agentId: string): Promise<DeadLetter[]> {
  return (await bus.deadLetters(EXTRACTION_SUBJECT)).filter((dead) => ofAgent(dead.payload, agentId));
}

/** Retries the agent's dead letter `id`; false when the agent has no such dead letter. */
export async function retryAgentDeadLetter(bus: EventBus, agentId: string, id: string): Promise<boolean> {
  return (await agentDeadLetters(bus, agentId)).some((dead) => dead.id === id) && (await bus.retryDeadLetter(id));
}
