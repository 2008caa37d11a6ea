/**
 * `/v0/orgs/:org/agents/:agent/extraction/dead-letters`: the agent's memory jobs
 * (extraction, and tagging of its reflections stored without tags) that failed for good
 * (the upstream refused them, or every delivery failed), with the reason in words, and a retry
 * that queues the job again. The same list on every engine: the bus port's. A listing
 * shows what a job covered, never its transcript text.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { EngramError } from '../../errors.js';
import type { ExtractionJob } from '../../memory/extraction-job.js';
import { agentDeadLetters, jobKind, retryAgentDeadLetter } from '../../memory/agent-jobs.js';
import type { DeadLetter } from '../../ports/index.js';
import { agentRead, findAgent, type AgentParams } from './access.js';
import { isoTime, Time } from './wire.js';

/** What a listing shows of a memory job: what it covers, never its transcript text. */
export const JobFields = {
  id: z.string(),
  kind: z
    .enum(['extraction', 'tagging'])
    .describe('extraction: learn from a conversation\'s new turns; tagging: give tags to the agent\'s reflections stored without them (a few dozen per job)'),
  conversation_id: z.string().nullable().describe('The conversation an extraction job learns from; null for a tagging job'),
  source: z.enum(['conversation', 'transcript']).nullable().describe('Where an extraction job\'s turns come from; null for a tagging job'),
  model: z.string().nullable(),
  turns: z.number().int().nullable().describe('How many turns an extraction job covers; null for a tagging job'),
  published_at: Time,
};

export const DeadLetterJson = z
  .object({
    ...JobFields,
    reason: z
      .string()
      .describe('Why it was given up, in words: the refusal ("upstream answered 401 Unauthorized"), or "gave up after 5 attempts: <the last failure>"'),
    last_error: z.string().nullable().describe('The last failed delivery\'s own reason; null when none was given (or for jobs dead-lettered before it was kept)'),
    attempts: z.number().int(),
    failed_at: Time,
  })
  .meta({ id: 'DeadLetter' });

export const RetriedJson = z.object({ id: z.string(), retried: z.literal(true) });

/** The fields of a job's payload a listing shows; `subject` says its kind. */
export function jobFields(id: string, subject: string, payload: unknown, publishedAt: number): z.output<z.ZodObject<typeof JobFields>> {
  const kind = jobKind(subject) ?? 'extraction';
  const job = (payload ?? {}) as Partial<ExtractionJob>;
  const extraction = kind === 'extraction';
  return {
    id,
    kind,
    conversation_id: job.conversationId ?? null,
    source: extraction ? job.source ?? 'conversation' : null,
    model: typeof job.model === 'string' ? job.model : null,
    turns: extraction && typeof job.turnCount === 'number' && typeof job.firstTurn === 'number' ? job.turnCount - job.firstTurn : null,
    published_at: isoTime(publishedAt),
  };
}


interface DeadLetterParams extends AgentParams {
  id: string;
}

const path = '/v0/orgs/:org/agents/:agent/extraction/dead-letters';

export const deadLetterRoutes: FastifyPluginAsync<{ deps: Deps }> = async (app, { deps }) => {
  app.get<{ Params: AgentParams }>(path, agentRead, async (request) => {
    const { agent } = await findAgent(deps.control, request.params);
    return { data: (await agentDeadLetters(deps.bus, agent.id)).map(deadLetterWire) };
  });

  app.post<{ Params: DeadLetterParams }>(`${path}/:id/retry`, async (request) => {
    const { agent } = await findAgent(deps.control, request.params);
    const { id } = request.params;
    // Only this agent's dead letters: an id of another agent's job is not found here.
    if (!(await retryAgentDeadLetter(deps.bus, agent.id, id))) {
      throw new EngramError('not_found', `No dead letter \`${id}\` for this agent`);
    }
    return { id, retried: true } satisfies z.output<typeof RetriedJson>;
  });
};

export function deadLetterWire(dead: DeadLetter): z.output<typeof DeadLetterJson> {
  return {
    ...jobFields(dead.id, dead.subject, dead.payload, dead.publishedAt),
    reason: dead.reason,
    last_error: dead.lastError ?? null,
    attempts: dead.attempts,
    failed_at: isoTime(dead.failedAt),
  };
}
