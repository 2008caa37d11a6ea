/**
 * The one skeleton of Engram's memory jobs (extraction, tagging, and whatever comes next):
 * what every delivery of such a job goes through, written once. Each job supplies its
 * steps (`MemoryJob.run`); the skeleton checks the payload, looks the agent up, gives the
 * steps the agent's upstream, its budget and the call, and settles how the delivery ended:
 *
 * | ending                            | the bus is told                                              |
 * |-----------------------------------|--------------------------------------------------------------|
 * | `done`                            | ack                                                          |
 * | `skip` (also: agent gone, not learning) | ack; `<kind> skipped` logged with the reason           |
 * | `defer` (the daily budget is spent) | the job published again for the next day, then ack      |
 * | thrown, permanent or unusable twice | dead-lettered (`term`) with its words                      |
 * | thrown, anything else             | thrown again: the bus retries it with the words as reason    |
 *
 * A retry stays a thrown `JobFailure`, never a `nak()`: the bus gives the words as the
 * failure's reason and the delivery log names the error.
 */
import type { Agent, ProtocolId } from '../domain/types.js';
import type { ForcedTool } from '../protocols/types.js';
import type { BusMessage, EventBus, UpstreamClient } from '../ports/index.js';
import type { Control } from '../control/control.js';
import type { JobKind } from './agent-jobs.js';
import { budgetReached, type SpendMeter } from './budget.js';
import { jobFailure, JobFailure, MODEL_ANSWER_DELIVERIES, type JobFailureObserver } from './job-failure.js';
import { callUpstream, jobUpstream, type JobProtocol, type JobUpstream } from './upstream-call.js';
import type { JobPayload } from './job-payload.js';

/** How a job's steps ended a delivery (a failure is thrown instead). */
export type JobEnding =
  | { end: 'done' }
  | { end: 'skip'; reason: string }
  /**
   * The agent's daily token budget is spent: `job` is published on `subject` again for
   * `until` (its `JobDeferral`), and the delivery is acked once it is, so a crash in between
   * leaves the job twice (the second finds its work done), never not at all. Its message id
   * is `key` and that day: a redelivery deferred again is stored once. `fields` go into the log line.
   */
  | { end: 'defer'; until: number; bus: EventBus; subject: string; job: JobPayload; key: string; fields?: object };

export const DONE: JobEnding = { end: 'done' };

/** Pino-compatible: structured fields first. Never given conversation text or secrets. */
export interface JobLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/** One delivery as a job's steps see it: the payload checked, the agent found and learning. */
export interface Delivery<P extends JobPayload> {
  readonly payload: P;
  readonly agent: Agent;
  /** What names this delivery in a log line: the agent, the job's own fields, the attempt. */
  readonly fields: object;
  /** The handler's log (`MemoryJobDeps.log`), silent when none is given. */
  readonly log: JobLog;
  /** The adapter, key and model of the agent's upstream, or the `skip` that ends the job (its secrets are gone). */
  upstream(): Promise<JobUpstream | JobEnding>;
  /** When the agent's jobs may run again if today's budget is spent (the next 00:00 UTC); asked before each call. */
  budgetSpent(): Promise<number | undefined>;
  /**
   * One forced-tool call to the agent's upstream, its spend counted: what the model gave
   * `tool`, unchecked. Throws a `JobFailure`, or a `ToolAnswerError` when the answer holds
   * no usable call.
   */
  ask(upstream: JobUpstream, instructions: string, text: string, tool: ForcedTool): Promise<unknown>;
}

export interface MemoryJob<P extends JobPayload> {
  readonly kind: JobKind;
  isPayload(value: unknown): value is P;
  /** The job's own fields in its log lines, between the agent and the attempt. */
  fields?(payload: P): object;
  /** The job's steps; the agent exists and learns. */
  run(delivery: Delivery<P>): Promise<JobEnding>;
}

export interface MemoryJobDeps {
  control: Pick<Control, 'directory' | 'agentSecrets'>;
  protocols: Partial<Record<ProtocolId, JobProtocol>>;
  upstream: UpstreamClient;
  /** Where each call's spend is counted and the daily budget read (`budget.ts`). Absent: no budget. */
  meter?: SpendMeter;
  now: () => number;
  /**
   * Time limit of one upstream call. Below the consumer's ack wait, so a hung call fails
   * here instead of running on while the bus redelivers the message to another worker.
   */
  timeoutMs?: number;
  /**
   * While a job runs, the bus is told every this often that it is still being worked on
   * (`BusMessage.working()`), so the ack wait can stay short: a crashed worker's job is
   * redelivered soon, a slow upstream's is not redelivered at all. A third of the ack wait.
   */
  heartbeatMs?: number;
  log?: JobLog;
  observer?: JobFailureObserver;
}

const SILENT: JobLog = { info() {}, warn() {} };

/**
 * The bus handler of `job`: the skeleton above around its steps. Whatever a delivery
 * throws becomes a `JobFailure`, counted, and is settled as the table says.
 */
export function memoryJobHandler<P extends JobPayload>(job: MemoryJob<P>, deps: MemoryJobDeps): (message: BusMessage<P>) => Promise<void> {
  const { kind } = job;
  const log = deps.log ?? SILENT;
  return async (message) => {
    const heartbeat = deps.heartbeatMs ? setInterval(() => void message.working().catch(() => undefined), deps.heartbeatMs) : undefined;
    try {
      const payload = message.payload;
      if (!job.isPayload(payload)) throw new JobFailure('malformed_job', `malformed ${kind} job`, { permanent: true });
      const fields = { agentId: payload.agentId, ...job.fields?.(payload), attempt: message.attempt };
      const agent = await deps.control.directory.getAgent(payload.orgId, payload.agentId);
      const ending: JobEnding =
        !agent || agent.id !== payload.agentId
          ? { end: 'skip', reason: 'agent deleted' }
          : !agent.memory.extract
            ? { end: 'skip', reason: 'extraction disabled' }
            : await job.run(delivery(kind, deps, { payload, agent, fields, log }));
      if (ending.end === 'skip') log.info({ ...fields, reason: ending.reason }, `${kind} skipped`);
      if (ending.end === 'defer') {
        const { bus, subject, job: deferred, key, until } = ending;
        await bus.publish(subject, { ...deferred, deferred: { until, from: message.id } }, { notBefore: until, msgId: `${key}/until-${until}` });
        log.info({ ...fields, ...ending.fields, until: new Date(until).toISOString() }, `${kind} deferred: the agent's daily token budget is spent`);
      }
      await message.ack();
    } catch (error) {
      const failure = jobFailure(error);
      deps.observer?.jobFailed(kind, failure.reason);
      const unusable = failure.reason === 'no_tool_call' || failure.reason === 'bad_answer';
      if (!failure.permanent && !(unusable && message.attempt >= MODEL_ANSWER_DELIVERIES)) throw failure;
      await message.term(failure.message);
    } finally {
      clearInterval(heartbeat);
    }
  };
}

function delivery<P extends JobPayload>(kind: JobKind, deps: MemoryJobDeps, given: Omit<Delivery<P>, 'upstream' | 'budgetSpent' | 'ask'>): Delivery<P> {
  const { payload, agent } = given;
  return {
    ...given,
    async upstream() {
      const upstream = await jobUpstream(deps, agent, payload);
      return 'skip' in upstream ? { end: 'skip', reason: upstream.skip } : upstream;
    },
    budgetSpent: () => budgetReached(deps.meter, agent, deps.now()),
    async ask({ adapter, secrets, model }, instructions, text, tool) {
      const request = adapter.toolRequest(model, instructions, text, tool);
      const body = await callUpstream({ upstream: deps.upstream, agent, secrets, adapter, body: request, timeoutMs: deps.timeoutMs });
      deps.meter?.spent(agent.id, kind, adapter.usage(body));
      return adapter.toolArguments(body, tool.name);
    },
  };
}
