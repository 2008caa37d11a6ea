/**
 * Uploaded session transcripts into the extraction pipeline (issue 5). A hook re-sends
 * the whole growing file every turn, so each upload is compared with the session's
 * previous one: an identical body does nothing, and of a grown one only the turns past
 * the watermark are queued. The queued job is the same as a proxied conversation's and
 * the same consumer extracts it once the session has been quiet for the settle time; a
 * newer upload of the session supersedes a job still waiting.
 *
 * The reply is given once the job is on the durable bus: a 2xx means queued, not learnt.
 */
import type { Agent, ProtocolId, Visibility } from '../domain/types.js';
import { markAllExtracted, markQueued, newConversationState, pendingTurns, type ConversationState } from '../domain/conversation-state.js';
import { idDigest, userConversationId } from '../control/conversation-id.js';
import { hookScope, type PlaceMarkers } from '../domain/scope.js';
import { collectTranscript, UnrecognisedTranscript, type CollectedTranscript } from '../transcripts/collect.js';
import type { ReadSummary } from '../transcripts/json-records.js';
import type { TranscriptFormat } from '../transcripts/types.js';
import { EngramError } from '../errors.js';
import { buildExtractionJob, jobVisibility } from './extraction-job.js';
import { publishJob } from './watermark.js';
import type { EventBus } from '../ports/index.js';
import type { Control } from '../control/control.js';

export interface TranscriptIngestDeps {
  control: Control;
  bus: EventBus;
  config: {
    settleMs: number;
    transcriptMaxBytes: number;
    extraction: { maxBytes: number; maxChunks: number };
  };
  now: () => number;
}

export interface TranscriptUpload {
  agent: Agent;
  format: TranscriptFormat;
  body: AsyncIterable<Buffer | string>;
  /** The session id from the hook's input, used when the transcript names none. */
  session?: string;
  /** Protocol to extract in, instead of the one the client speaks. */
  protocol?: ProtocolId;
  /**
   * The upload's scope and user (`x-engram-scope`, `x-engram-user`). Without a scope, the
   * repository of the working directory the transcript names is the scope.
   */
  visible?: Visibility;
  /**
   * Where the client keeps the transcript (the hook input's path, `x-engram-transcript-path`):
   * Claude Code's folder for it is keyed by the session's repository root, which makes a
   * session started in a subfolder the repository's (`domain/scope.ts`).
   */
  path?: string;
  /** The git root the hook script found where the session ran (`x-engram-repository-root`). */
  root?: string;
  /** How the clients state where they run (their profiles' `place`): `path` is read with them. */
  places: readonly PlaceMarkers[];
}

/**
 * - `queued`: new turns are on the bus for extraction.
 * - `unchanged`: the same bytes as the session's previous upload.
 * - `up_to_date`: no turn past the watermark (only bookkeeping lines were appended).
 * - `learnt_through_proxy`: the session's requests went through Engram, which learns from them already.
 * - `not_extracted`: nothing will be learnt (`reason` says why); the upload is not remembered, so a
 *   later upload of the same file is considered again.
 */
export type IngestStatus = 'queued' | 'unchanged' | 'up_to_date' | 'learnt_through_proxy' | 'not_extracted';

export interface IngestResult {
  status: IngestStatus;
  session: string;
  /** Turns in the whole transcript. */
  turns: number;
  /** Turns queued for extraction. */
  queuedTurns: number;
  read: ReadSummary;
  reason?: string;
}

/**
 * Records read before an upload none of whose records is of the format is refused: every
 * client's transcript opens with a record its reader knows (the session's), so a body
 * that has none by then is not one, and is not read to its end.
 */
const RECOGNISED_WITHIN = 10_000;

function notThisFormat(format: TranscriptFormat, records: string): EngramError {
  return new EngramError(
    'invalid_request',
    `The body is not a ${format.label}: none of ${records} JSON records is one. Upload the transcript file itself ` +
      '(the path in the hook input), not the hook input.',
  );
}

/** One session's uploads in this process run one at a time, so two hooks firing together do not race. */
export type SessionQueue = <T>(key: string, task: () => Promise<T>) => Promise<T>;

export function createSessionQueue(): SessionQueue {
  const tails = new Map<string, Promise<unknown>>();
  return async (key, task) => {
    const previous = tails.get(key) ?? Promise.resolve();
    const run = previous.then(task, task);
    const tail = run.catch(() => undefined);
    tails.set(key, tail);
    try {
      return await run;
    } finally {
      if (tails.get(key) === tail) tails.delete(key);
    }
  };
}

export async function ingestTranscript(deps: TranscriptIngestDeps, upload: TranscriptUpload, queue: SessionQueue): Promise<IngestResult> {
  const { agent, format } = upload;
  const { extraction } = deps.config;
  const collected = await collectTranscript(upload.body, format, {
    maxBytes: deps.config.transcriptMaxBytes,
    // What `buildExtractionJob` may keep of one turn, and of the newest turns (a margin for redaction and stripping).
    turnChars: extraction.maxBytes,
    windowChars: extraction.maxBytes * extraction.maxChunks * 2,
    recognisedWithin: RECOGNISED_WITHIN,
  }).catch((error: unknown): CollectedTranscript => {
    if (error instanceof UnrecognisedTranscript) throw notThisFormat(format, `the first ${error.records}`);
    throw error;
  });
  const { read, meta } = collected;
  if (meta.recognised === 0) throw notThisFormat(format, `its ${read.records}`);
  const session = meta.sessionId ?? upload.session ?? (collected.turnCount > 0 ? `first-turn:${collected.fingerprint(1)}` : undefined);
  if (!session) throw new EngramError('invalid_request', `The ${format.label} holds no conversation and names no session`);
  const visible = upload.visible ?? {};
  const scope = visible.scope ?? (meta.cwd === undefined ? undefined : hookScope(meta.cwd, { path: upload.path, root: upload.root }, upload.places));
  const conversationId = userConversationId(`t:${format.id}:${session.length <= 128 ? session : idDigest(session)}`, visible.user);
  const result = (status: IngestStatus, queuedTurns = 0, reason?: string): IngestResult =>
    ({ status, session, turns: collected.turnCount, queuedTurns, read, ...(reason ? { reason } : {}) });

  return queue(`${agent.id}/${conversationId}`, async () => {
    const now = deps.now();
    const previous = await deps.control.getConversation(agent.id, conversationId);
    if (previous?.upload?.sha256 === read.sha256) return result('unchanged');
    const protocol = upload.protocol ?? previous?.protocol ?? format.protocol;
    const mark = { sha256: read.sha256, turns: collected.turnCount, fingerprint: collected.fingerprint(collected.turnCount), at: now };
    /** Records this upload on the latest state (another replica or job may have written since it was read). */
    const record = (change: (state: ConversationState) => ConversationState) =>
      deps.control.updateConversation(agent.id, conversationId, (current) =>
        change({ ...(current ?? newConversationState(agent.id, conversationId, protocol, now)), protocol, lastActivityAt: now, upload: mark }),
      );

    if (await deps.control.conversations.hasSession(agent.id, idDigest(session))) {
      await record((state) => markAllExtracted(state, collected.turnCount));
      return result('learnt_through_proxy');
    }
    // A file that is not the previous one grown (rewritten, or shorter) is learnt from afresh:
    // the writer drops near-duplicates of what was learnt before.
    const before = previous?.upload;
    const rewritten = before !== undefined && (collected.turnCount < before.turns || collected.fingerprint(before.turns) !== before.fingerprint);
    const pending = pendingTurns(previous, collected.turnCount, { rewritten });
    const settled = (queued: boolean) => (state: ConversationState) => markQueued(state, { settledAt: now, queued, restarted: pending.restarted });
    if (!agent.memory.extract) return result('not_extracted', 0, 'extraction is off for this agent');
    const model = agent.memory.extractionModel ?? meta.model;
    const noModel = `the ${format.label} names no model: set the agent's extraction model (memory.extraction_model) to learn from it`;
    if (!model) return result('not_extracted', 0, noModel);
    const job = buildExtractionJob({
      agentId: agent.id,
      orgId: agent.orgId,
      conversationId,
      protocol,
      model,
      turns: collected.window,
      offset: collected.windowStart,
      watermark: pending.from,
      maxBytes: extraction.maxBytes,
      maxChunks: extraction.maxChunks,
      settledAt: now,
      source: 'transcript',
      ...(meta.instructions ? { instructions: meta.instructions } : {}),
      ...jobVisibility({ scope, user: visible.user }),
    });
    if (!job) {
      await record(settled(false));
      return result('up_to_date');
    }
    // Published before the state marks it queued (`watermark.ts`).
    await publishJob(deps.bus, job, deps.config.settleMs);
    await record(settled(true));
    return result('queued', job.turnCount - job.firstTurn);
  });
}

