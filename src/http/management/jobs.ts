/**
 * `/v0/orgs/:org/agents/:agent/jobs`: what the agent's memory is waiting for. A
 * conversation is extracted once it has been quiet for the settle time
 * (`ENGRAM_SETTLE_MS`), so a job sits `queued` with its due time first; then it is
 * `running`; a failed delivery waits `failed` for its next attempt, saying why it failed
 * (`last_error`); a job that failed for good is `dead` (see dead-letters.ts). Tagging jobs (reflections stored without tags get
 * them, at most one job per `ENGRAM_TAGGING_INTERVAL_MS`) are listed beside, with `kind:
 * "tagging"`. Read from the bus port, so the answer is the same on every engine; a job
 * shows what it covers, never its transcript text.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { agentJobs } from '../../memory/agent-jobs.js';
import type { QueuedMessage } from '../../ports/event-bus.js';
import { agentRead, findAgent, type AgentParams } from './access.js';
import { DeadLetterJson, deadLetterWire, JobFields, jobFields } from './dead-letters.js';
import { isoTime, Time } from './wire.js';

export const JobJson = z
  .object({
    ...JobFields,
    due_at: Time.nullable().describe('When it runs (queued) or is tried again (failed); null when it may run now'),
    attempts: z.number().int().nullable().describe('Deliveries so far, where the engine counts them per job'),
    last_error: z
      .string()
      .nullable()
      .describe('Why its last delivery failed, in words (e.g. "upstream answered 503 Service Unavailable"); null while none has failed'),
  })
  .meta({ id: 'Job' });

export const JobsJson = z
  .object({
    agent_id: z.string(),
    settle_ms: z.number().int().describe('How long a conversation stays quiet before its new turns are extracted'),
    tagging_interval_ms: z.number().int().describe('An agent\'s tagging jobs run at most once per this interval'),
    next_due_at: Time.nullable().describe('When the next queued job runs; null when none waits'),
    queued: z.array(JobJson),
    running: z.array(JobJson),
    failed: z.array(JobJson),
    dead: z.array(DeadLetterJson),
    truncated: z.boolean().describe('More jobs are queued (for all agents) than one listing reads: this one may be incomplete'),
  })
  .meta({ id: 'Jobs' });

function jobWire(message: QueuedMessage): z.output<typeof JobJson> {
  return {
    ...jobFields(message.id, message.subject, message.payload, message.publishedAt),
    due_at: isoTime(message.dueAt ?? null),
    attempts: message.attempts ?? null,
    last_error: message.lastError ?? null,
  };
}

export const jobRoutes: FastifyPluginAsync<{ deps: Deps }> = async (app, { deps }) => {
  app.get<{ Params: AgentParams }>('/v0/orgs/:org/agents/:agent/jobs', agentRead, async (request): Promise<z.output<typeof JobsJson>> => {
    const { agent } = await findAgent(deps.control, request.params);
    const jobs = await agentJobs(deps.bus, agent.id);
    const waiting = jobs.queued.filter((message) => message.state === 'waiting').map((message) => message.dueAt ?? Infinity);
    const ready = jobs.queued.some((message) => message.state === 'ready');
    return {
      agent_id: agent.id,
      settle_ms: deps.config.settleMs,
      tagging_interval_ms: deps.config.extraction.taggingIntervalMs,
      next_due_at: ready ? isoTime(deps.now()) : waiting.length > 0 ? isoTime(Math.min(...waiting)) : null,
      queued: jobs.queued.map(jobWire).sort((a, b) => (a.due_at ?? '').localeCompare(b.due_at ?? '')),
      running: jobs.running.map(jobWire),
      failed: jobs.failed.map(jobWire),
      dead: jobs.dead.map(deadLetterWire),
      truncated: jobs.truncated,
    };
  });
};
