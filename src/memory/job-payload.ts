/** The payload every memory job carries; the kinds (`extraction-job.ts`, `tagging-job.ts`) extend it. */
import type { ProtocolId } from '../domain/types.js';
import { isObject } from '../protocols/shared.js';

/** What every memory job's payload names: whose job, and the upstream its conversation speaks. */
export interface JobPayload {
  agentId: string;
  orgId: string;
  protocol: ProtocolId;
  /** The conversation's model; used unless the agent configures an extraction model. */
  model: string;
  /** Set on a job queued again because the agent's daily budget was spent (`budget.ts`). */
  deferred?: JobDeferral;
}

/**
 * Why a memory job waits: it was handed to a worker, but the agent's daily token budget
 * was spent, so it was published again for the next day and the delivery acked.
 */
export interface JobDeferral {
  /** Epoch ms it waits for: the next 00:00 UTC. */
  until: number;
  /** The bus id of the delivery it replaces: that delivery's ack is a deferral, not a job done. */
  from: string;
}

/** A payload that names what every memory job needs (its kind checks the rest); anything else is dead-lettered. */
export function isJobPayload(value: unknown): value is JobPayload {
  return isObject(value) && ['agentId', 'orgId', 'protocol', 'model'].every((key) => typeof value[key] === 'string');
}
