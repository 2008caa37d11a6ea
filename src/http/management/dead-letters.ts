/**
 * `/v0/orgs/:org/agents/:agent/extraction/dead-letters`: the agent's extraction jobs that
 * failed for good (the upstream refused them, or every delivery failed), with the reason,
 * and a retry that queues the job again. The same list on every engine: the bus port's.
 * A listing shows what a job covered, never its transcript text.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { EngramError } from '../../errors.js';
import type { ExtractionJob } from '../../memory/extraction-job.js';
import { agentDeadLetters, retryAgentDeadLetter } from '../../memory/agent-jobs.js';
import type { DeadLetter } from '../../ports/index.js';
import { agentRead, findAgent, type AgentParams } from './access.js';
import { isoTime, Time } from './wire.js';

/** What a listing shows of an extraction job: what it covers, never its transcript text. */
export const JobFields = {
  id: z.string(),
  conversation_id: z.string().nullable(),
  source: z.enum(['conversation', 'transcript']),
  model: z.string().nullable(),
  turns: z.number().int().nullable().describe('How many turns the job covers'),
  published_at: Time,
};

export const DeadLetterJson = z
  .object({ ...JobFields, reason: z.string(), attempts: z.number().int(), failed_at: Time })
  .meta({ id: 'DeadLetter' });

export const RetriedJson = z.object({ id: z.string(), retried: z.literal(true) });

/** The fields of an extraction job's payload a listing shows. */
export function jobFields(id: string, payload: unknown, publishedAt: number): z.output<z.ZodObject<typeof JobFields>> {
  const job = (payload ?? {}) as Partial<ExtractionJob>;
  return {
    id,
    conversation_id: job.conversationId ?? null,
    source: job.source ?? 'conversation',
    model: job.model ?? null,
    turns: typeof job.turnCount === 'number' && typeof job.firstTurn === 'number' ? job.turnCount - job.firstTurn : null,
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
    ...jobFields(dead.id, dead.payload, dead.publishedAt),
    reason: dead.reason,
    attempts: dead.attempts,
    failed_at: isoTime(dead.failedAt),
  };
}
