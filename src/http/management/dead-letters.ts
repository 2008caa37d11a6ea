/**
 * `/v0/orgs/:org/agents/:agent/extraction/dead-letters`: the agent's extraction jobs that
 * failed for good (the upstream refused them, or every delivery failed), with the reason,
 * and a retry that queues the job again. The same list on every engine: the bus port's.
 * A listing shows what a job covered, never its transcript text.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../../deps.js';
import { EngramError } from '../../errors.js';
import { EXTRACTION_SUBJECT, type ExtractionJob } from '../../memory/extraction-job.js';
import type { DeadLetter } from '../../ports/index.js';
import { agentRead, findAgent, type AgentParams } from './access.js';
import { isoTime } from './wire.js';

interface DeadLetterParams extends AgentParams {
  id: string;
}

const path = '/v0/orgs/:org/agents/:agent/extraction/dead-letters';

export const deadLetterRoutes: FastifyPluginAsync<{ deps: Deps }> = async (app, { deps }) => {
  const ofAgent = async (agentId: string): Promise<DeadLetter[]> =>
    (await deps.bus.deadLetters(EXTRACTION_SUBJECT)).filter((dead) => (dead.payload as Partial<ExtractionJob> | null)?.agentId === agentId);

  app.get<{ Params: AgentParams }>(path, agentRead, async (request) => {
    const { agent } = await findAgent(deps.control, request.params);
    return { data: (await ofAgent(agent.id)).map(deadLetterWire) };
  });

  app.post<{ Params: DeadLetterParams }>(`${path}/:id/retry`, async (request) => {
    const { agent } = await findAgent(deps.control, request.params);
    const { id } = request.params;
    // Only this agent's dead letters: an id of another agent's job is not found here.
    if (!(await ofAgent(agent.id)).some((dead) => dead.id === id) || !(await deps.bus.retryDeadLetter(id))) {
      throw new EngramError('not_found', `No dead letter \`${id}\` for this agent`);
    }
    return { id, retried: true };
  });
};

function deadLetterWire(dead: DeadLetter): Record<string, unknown> {
  const job = (dead.payload ?? {}) as Partial<ExtractionJob>;
  return {
    id: dead.id,
    conversation_id: job.conversationId ?? null,
    source: job.source ?? 'conversation',
    model: job.model ?? null,
    turns: typeof job.turnCount === 'number' && typeof job.firstTurn === 'number' ? job.turnCount - job.firstTurn : null,
    reason: dead.reason,
    attempts: dead.attempts,
    published_at: isoTime(dead.publishedAt),
    failed_at: isoTime(dead.failedAt),
  };
}
