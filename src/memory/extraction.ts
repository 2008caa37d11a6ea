/**
 * The extraction pipeline's consumer (DESIGN section 5): for each settled conversation,
 * ask the agent's own upstream for reflections on the turns not yet extracted, store
 * them, and move the conversation's watermark. At-least-once delivery makes every step
 * safe to repeat: the watermark check skips finished jobs, reflection ids come from
 * content.
 */
import type { ProposedReflection } from '../protocols/types.js';
import type { ReflectionOrigin } from '../domain/types.js';
import type { BusMessage, EventBus, ReflectionStore, Subscription } from '../ports/index.js';
import type { Control } from '../control/control.js';
import type { ReflectionWriter } from './reflection-writer.js';
import type { MemorySearchDeps } from './memory-search.js';
import { EXTRACTION_INSTRUCTIONS } from './extraction-instructions.js';
import { relatedReflections } from './existing-reflections.js';
import { extractionInput, hasText } from './extraction-frame.js';
import { EXTRACTION_SUBJECT, chunkEnds, extractionConsumerOptions, isUnredacted, jobVisibility, redactJob, type JobHeader, type QueuedExtractionJob, type UnredactedJob } from './extraction-job.js';
import type { CleanedTurns } from './cleaned-turns.js';
import { INSTRUCTIONS_SHOWN_SHARE, shownInstructions } from './instruction-text.js';
import { instructionIndex, withoutRestatements } from './restatement.js';
import { requestTagging, type TaggingSchedule } from './tagging-job.js';
import type { JobFailureObserver } from './job-failure.js';
import { DONE, memoryJobHandler, type JobLog, type MemoryJob, type MemoryJobDeps } from './memory-job.js';
import { isJobPayload } from './job-payload.js';
import { jobTurns } from '../domain/conversation-state.js';
import { jobMessageId, markExtracted } from './watermark.js';
import type { SpendMeter } from './budget.js';
import { proposedFrom, RECORD_REFLECTIONS } from './extraction-tool.js';

export { EXTRACTION_INSTRUCTIONS } from './extraction-instructions.js';
export { extractionInput, renderTranscript } from './extraction-frame.js';
export {
  EXTRACTION_SUBJECT,
  buildExtractionJob,
  chunkEnds,
  redactJob,
  selectNewTurns,
  extractionConsumerOptions,
  type BuildExtractionJobInput,
  type ExtractionJob,
  type QueuedExtractionJob,
  type UnredactedJob,
} from './extraction-job.js';

/** Why a proposal of the extraction model was not stored. */
export type DroppedReason = 'restates_instructions' | 'no_content';

/** Told what extraction left out, and why a job failed, for the metrics. */
export interface ExtractionObserver extends JobFailureObserver {
  /**
   * Proposals not stored, by why: `restates_instructions` (`restatement.ts`), `no_content`
   * (they say too little to be a reflection: `domain/reflection-content.ts`).
   */
  reflectionsDropped(reason: DroppedReason, count: number): void;
}

/** Pino-compatible: structured fields first. Never given transcript text or secrets. */
export interface ExtractionLog extends JobLog {
  error(fields: object, message: string): void;
}

/** The skeleton's (`memory-job.ts`), but its budget, which also says where a deferred job waits. */
export interface ExtractionDeps extends Omit<MemoryJobDeps, 'meter'> {
  control: Control;
  writer: ReflectionWriter;
  /** How each call finds the agent's reflections related to its chunk, shown to the model by id. */
  search: MemorySearchDeps;
  log?: ExtractionLog;
  observer?: ExtractionObserver;
  /**
   * Where the agent's tagging job is queued once a job is done (`tagging-job.ts`): its
   * reflections without tags get them on the upstream this conversation shows it speaks.
   * Absent: no tagging job is queued.
   */
  tagging?: TaggingSchedule & { reflections: ReflectionStore };
  /**
   * Where each call's spend is counted, and where a job waits once the agent's daily token
   * budget is spent (`budget.ts`). Absent: nothing is counted, no budget applies.
   */
  budget?: { meter: SpendMeter; bus: EventBus };
  /** Text of one extraction call (`Config.extraction.maxBytes`); a longer job is extracted in chunks. */
  maxBytes?: number;
  /** Turns redacted already: a conversation's jobs share their history, redacted once. */
  cleaned?: CleanedTurns;
}

/** `Config.extraction.maxBytes`'s default: what the instructions shown are a share of when no bound is given. */
const DEFAULT_SHOWN_BASE = 48 * 1024;

/**
 * The handler for `EXTRACTION_SUBJECT`, on the skeleton of `memory-job.ts` (how failures
 * and a spent budget end a delivery; the budget is asked before each call). It acks without
 * calling the upstream when the conversation's watermark says a newer job covers the turns
 * or they were extracted already (`jobTurns`). A job done, or skipped as already extracted,
 * queues the agent's tagging job when reflections wait for tags.
 */
export function createExtractionHandler(deps: ExtractionDeps): (message: BusMessage<QueuedExtractionJob>) => Promise<void> {
  return memoryJobHandler(extraction(deps), { ...deps, meter: deps.budget?.meter });
}

function extraction(deps: ExtractionDeps): MemoryJob<QueuedExtractionJob> {
  return {
    kind: 'extraction',
    isPayload: isJob,
    fields: (queued) => ({ conversationId: queued.conversationId }),
    async run({ payload: queued, agent, fields, log, ...call }) {
      const state = await deps.control.getConversation(queued.agentId, queued.conversationId);
      const pending = jobTurns(state, queued);
      if ('skip' in pending) {
        if (pending.skip === 'already extracted') await queueTagging(deps, log, queued);
        return { end: 'skip', reason: pending.skip };
      }

      // A turn's job is redacted and bounded here, only once it is sure to run (DESIGN section 2).
      const job = isUnredacted(queued) ? redactJob(queued, deps.cleaned) : queued;
      // Redaction may have left the oldest turns out (they no longer fit once cleaned).
      const from = job ? Math.max(pending.from, job.firstTurn) : queued.turnCount;
      const turns = job ? job.turns.slice(from - job.firstTurn) : [];
      if (!job || !hasText(turns)) {
        await markExtracted(deps.control, queued, queued.turnCount, deps.now());
        await queueTagging(deps, log, queued);
        return DONE;
      }
      // A turn that stated no project (Claude Code's title request opens its session) is the
      // project's all the same once a later turn of the conversation named it.
      const visible = jobVisibility({ scope: job.scope ?? state?.scope, user: job.user });
      const upstream = await call.upstream();
      if ('end' in upstream) return upstream;
      // The conversation's own instructions: shown so the model leaves them out, and what it
      // proposes anyway that only restates them is dropped before storing.
      const instructions = job.instructions ?? [];
      const shown = shownInstructions(instructions, Math.floor((deps.maxBytes ?? DEFAULT_SHOWN_BASE) * INSTRUCTIONS_SHOWN_SHARE));
      const restating = instructionIndex(instructions);

      // One call per chunk, the watermark moved after each: a redelivery resumes after the
      // chunks already done.
      const ends = chunkEnds(turns, deps.maxBytes ?? Number.POSITIVE_INFINITY);
      let start = 0;
      for (const end of ends) {
        const chunkStart = start;
        const chunk = turns.slice(start, end);
        const upTo = end === turns.length ? job.turnCount : from + end;
        start = end;
        if (!hasText(chunk)) {
          await markExtracted(deps.control, job, upTo, deps.now());
          continue;
        }
        // Checked per call: a job spread over chunks stops at the one the budget does not cover; done chunks stay done.
        const until = await call.budgetSpent();
        if (until !== undefined && deps.budget) {
          // It keeps its `settledAt`, so a newer job of the conversation still replaces it; it replaces none itself.
          return { end: 'defer', until, bus: deps.budget.bus, subject: EXTRACTION_SUBJECT, job, key: jobMessageId(job) };
        }
        const started = deps.now();
        // Searched per chunk: what an earlier chunk of this job stored is shown to the next.
        const existing = await relatedReflections(deps.search, agent, chunk, visible);
        const input = extractionInput(existing, chunk, from + chunkStart, shown);
        const proposed = proposedFrom(await call.ask(upstream, EXTRACTION_INSTRUCTIONS, input, RECORD_REFLECTIONS));
        const { kept, dropped: restated } = withoutRestatements(restating, proposed);
        if (restated > 0) deps.observer?.reflectionsDropped('restates_instructions', restated);
        // Where each reflection comes from: the turn the model cited, when it is one it was shown.
        const origin = (proposal: ProposedReflection): ReflectionOrigin => {
          const cited = proposal.turn !== undefined && proposal.turn >= from + chunkStart && proposal.turn < from + start ? proposal.turn : undefined;
          const turn = cited === undefined ? undefined : turns[cited - from];
          return { conversation: job.conversationId, ...(turn ? { turn: cited, role: turn.role } : {}) };
        };
        // Only what the model was shown may be superseded: an id it invents, or one a turn quotes, is ignored.
        const result = await deps.writer.write(agent.id, kept, job.source ?? 'conversation', {
          origin,
          supersedable: new Set(existing.map((reflection) => reflection.id)),
          ...visible,
        });
        if (result.noContent > 0) deps.observer?.reflectionsDropped('no_content', result.noContent);
        await markExtracted(deps.control, job, upTo, deps.now());
        log.info(
          {
            ...fields,
            model: upstream.model,
            turns: upTo - (from + chunkStart),
            inputChars: input.length,
            proposed: proposed.length,
            restated,
            shown: existing.length,
            stored: result.stored.length,
            duplicates: result.duplicates,
            rejected: result.rejected,
            noContent: result.noContent,
            superseded: result.superseded,
            restored: result.restored,
            ms: deps.now() - started,
          },
          'extraction done',
        );
        if (result.overLimit > 0) {
          log.warn({ ...fields, notStored: result.overLimit, limit: result.limit }, 'agent reached its reflection limit (ENGRAM_MAX_REFLECTIONS): new reflections not stored');
        }
      }
      await queueTagging(deps, log, job);
      return DONE;
    },
  };
}

/**
 * Queues the agent's tagging job if reflections wait for tags. A failure is logged, not
 * thrown: the extraction is done, and the agent's next one queues the job again.
 */
async function queueTagging(deps: ExtractionDeps, log: JobLog, job: JobHeader): Promise<void> {
  if (!deps.tagging) return;
  try {
    await requestTagging(deps.tagging, { agentId: job.agentId, orgId: job.orgId, protocol: job.protocol, model: job.model });
  } catch (error) {
    log.warn({ agentId: job.agentId, err: error }, 'queueing the tagging job failed; the next extraction queues it');
  }
}

/** Subscribes `handler` to the extraction subject with the configured delivery limits. */
export function consumeExtractionJobs(
  bus: EventBus,
  handler: (message: BusMessage<QueuedExtractionJob>) => Promise<void>,
  config: { ackWaitMs: number; maxDeliver: number; concurrency: number },
): Subscription {
  return bus.consume<QueuedExtractionJob>(EXTRACTION_SUBJECT, handler, extractionConsumerOptions(config));
}

function isJob(value: unknown): value is QueuedExtractionJob {
  const job = value as Partial<UnredactedJob>;
  return (
    isJobPayload(value) &&
    typeof job.conversationId === 'string' &&
    Number.isInteger(job.firstTurn) &&
    Number.isInteger(job.turnCount) &&
    typeof job.settledAt === 'number' &&
    Array.isArray(job.turns) &&
    job.turns.every((turn) => typeof turn?.role === 'string' && typeof turn.text === 'string') &&
    (job.unredacted === undefined || (job.unredacted === true && Number.isInteger(job.maxBytes) && job.maxBytes! > 0)) &&
    [job.instructions, job.instructionUnits].every((lines) => lines === undefined || (Array.isArray(lines) && lines.every((line) => typeof line === 'string')))
  );
}
