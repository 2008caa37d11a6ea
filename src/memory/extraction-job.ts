/**
 * What travels on the extraction subject: the new turns of one settled conversation,
 * already cleaned (Engram's blocks stripped, secrets redacted) and bounded in size, so
 * the bus never stores a secret or an unbounded transcript.
 */
import type { Turn } from '../domain/transcript.js';
import type { ProtocolId, ReflectionSource } from '../domain/types.js';
import { redactSecrets } from '../domain/redact.js';
import { truncateMiddle } from '../domain/text.js';
import type { ConsumerOptions, EventBus, PublishOptions } from '../ports/index.js';
import { stripEngramBlocks } from './engram-blocks.js';

export const EXTRACTION_SUBJECT = 'engram.extraction';

export interface ExtractionJob {
  agentId: string;
  orgId: string;
  conversationId: string;
  protocol: ProtocolId;
  /** The conversation's model; used unless the agent configures an extraction model. */
  model: string;
  /** Index, in the conversation's transcript, of `turns[0]`. */
  firstTurn: number;
  /**
   * Turns `firstTurn` .. `turnCount - 1`, cleaned and bounded by `buildExtractionJob`. An
   * uploaded transcript's may exceed one call's `maxBytes`: the consumer extracts them in
   * consecutive chunks, moving the watermark after each.
   */
  turns: Turn[];
  /** Transcript length covered by this job: the watermark once it is extracted. */
  turnCount: number;
  /**
   * Epoch ms of the final answer that completed these turns: the value the publisher
   * also writes to `ConversationState.lastFinalAt`. A state with a later `lastFinalAt`
   * means a newer job covers these turns too.
   */
  settledAt: number;
  /** Where the turns come from, recorded on the reflections; absent means `conversation`. */
  source?: ExtractionSource;
}

/** Extraction learns from proxied conversations and uploaded transcripts; `mcp` writes come another way. */
export type ExtractionSource = Exclude<ReflectionSource, 'mcp'>;

export interface BuildExtractionJobInput {
  agentId: string;
  orgId: string;
  conversationId: string;
  protocol: ProtocolId;
  model: string;
  /** The conversation's turns from `offset` on (all of them by default), the final answer included. */
  turns: readonly Turn[];
  /** Index of `turns[0]` in the conversation (default 0). */
  offset?: number;
  /** `ConversationState.extractedTurns`: turns before it were extracted already. */
  watermark: number;
  /** Bound on one extraction call's text (`Config.extraction.maxBytes`), in UTF-8 bytes. */
  maxBytes: number;
  /** Calls the job may take (default 1): its text is bounded by `maxBytes * maxChunks`. */
  maxChunks?: number;
  settledAt: number;
  source?: ExtractionSource;
}

/** Role label and blank line around each turn, counted against `maxBytes`. */
const TURN_OVERHEAD = 16;
/**
 * How much redaction is assumed to shrink a turn at most, when deciding, before redacting
 * it, that an older turn cannot fit. Only a turn that is mostly secrets (a dumped private
 * key) shrinks more; it is then left out although it would have fit.
 */
const REDACTION_MARGIN = 2;

/**
 * The job for the turns after `watermark`, or `undefined` when none of them has any text.
 * Each turn is stripped of Engram's blocks and redacted, then a long one is cut in the
 * middle (a user or assistant turn to a quarter of `maxBytes`, a tool result to a
 * twelfth: outputs are long and their head and tail say the most). When the turns still
 * exceed `maxBytes * maxChunks`, the most recent ones are kept and `firstTurn` moves forward.
 *
 * Work is bounded by that budget, not by the conversation: turns are taken newest first,
 * and an older turn is cleaned only if it may still fit, by its length before redaction.
 */
export function buildExtractionJob(input: BuildExtractionJobInput): ExtractionJob | undefined {
  const offset = input.offset ?? 0;
  const budget = input.maxBytes * (input.maxChunks ?? 1);
  const start = Math.max(0, input.watermark - offset);
  if (start >= input.turns.length) return undefined;
  const kept: Turn[] = [];
  let total = 0;
  let firstTurn = input.turns.length;
  for (let i = input.turns.length - 1; i >= start; i--) {
    const turn = input.turns[i];
    const cap = turnCap(turn, input.maxBytes);
    const stripped = stripEngramBlocks(turn.text);
    // UTF-8 takes at least a byte per UTF-16 unit, and a long turn is cut to about `cap`.
    const least = Math.min(stripped.length, cap) / REDACTION_MARGIN + TURN_OVERHEAD;
    if (kept.length > 0 && total + least > budget) break;
    const { text, bytes } = cleanTurnText(stripped, cap);
    const size = bytes + TURN_OVERHEAD;
    if (total + size > budget && kept.length > 0) break;
    kept.push({ role: turn.role, text });
    total += size;
    firstTurn = i;
  }
  if (!kept.some((turn) => /\S/.test(turn.text))) return undefined;
  return {
    agentId: input.agentId,
    orgId: input.orgId,
    conversationId: input.conversationId,
    protocol: input.protocol,
    model: input.model,
    firstTurn: offset + firstTurn,
    turns: kept.reverse(),
    turnCount: offset + input.turns.length,
    settledAt: input.settledAt,
    ...(input.source && input.source !== 'conversation' ? { source: input.source } : {}),
  };
}

/**
 * Splits a job's turns into consecutive runs of at most `maxBytes` of text each (a turn
 * larger on its own is a run by itself): one extraction call per run. Ends are indexes
 * into `turns`, exclusive.
 */
export function chunkEnds(turns: readonly Turn[], maxBytes: number): number[] {
  const ends: number[] = [];
  let size = 0;
  for (let i = 0; i < turns.length; i++) {
    const bytes = Buffer.byteLength(turns[i].text, 'utf8') + TURN_OVERHEAD;
    if (size > 0 && size + bytes > maxBytes) {
      ends.push(i);
      size = 0;
    }
    size += bytes;
  }
  if (turns.length > 0) ends.push(turns.length);
  return ends;
}

/** A turn's share of `maxBytes`, in UTF-8 bytes. */
function turnCap(turn: Turn, maxBytes: number): number {
  return Math.max(256, Math.floor(maxBytes / (turn.role === 'tool' ? 12 : 4)));
}

/** `text` (already stripped of Engram's blocks) redacted and cut to `cap` bytes, and its size. */
function cleanTurnText(text: string, cap: number): { text: string; bytes: number } {
  // Redaction scans the whole text, so a huge output is first cut to a few times the cap.
  // The final cut keeps cap/2 from each end, far from this one, so a secret split here
  // lies in the part that is dropped anyway.
  let out = truncateMiddle(redactSecrets(truncateMiddle(text, cap * 4)), cap);
  let bytes = Buffer.byteLength(out, 'utf8');
  // A cap in characters can exceed the byte cap for non-Latin text; shrink once more.
  if (bytes > cap) {
    out = truncateMiddle(out, Math.floor((out.length * cap) / bytes));
    bytes = Buffer.byteLength(out, 'utf8');
  }
  return { text: out, bytes };
}

const ROLE_LABELS: Record<Turn['role'], string> = { user: 'User', assistant: 'Assistant', tool: 'Tool' };

/** Plain transcript text for the extraction model: `User: ...`, `Assistant: ...`, `Tool: ...`. */
export function renderTranscript(turns: readonly Turn[]): string {
  return turns
    .filter((turn) => turn.text.trim() !== '')
    .map((turn) => `${ROLE_LABELS[turn.role]}: ${turn.text.trim()}`)
    .join('\n\n');
}

/**
 * Publishes `job` for delivery once the conversation has been quiet for `settleMs`. The
 * message id includes the settle time: a job is superseded by any newer final answer of
 * its conversation (`lastFinalAt`), so the newer one must always be queued, never
 * deduplicated away; the id only makes a re-publish of the very same job a no-op.
 */
export async function publishExtractionJob(bus: EventBus, job: ExtractionJob, settleMs: number): Promise<void> {
  const options: PublishOptions = {
    notBefore: job.settledAt + settleMs,
    msgId: `${job.agentId}/${job.conversationId}/${job.turnCount}/${job.settledAt}`,
  };
  await bus.publish(EXTRACTION_SUBJECT, job, options);
}

/** Consumer settings for the extraction subject: exponential backoff from 5 s, capped at 5 min. */
export function extractionConsumerOptions(config: {
  ackWaitMs: number;
  maxDeliver: number;
  concurrency: number;
}): ConsumerOptions {
  return {
    ackWaitMs: config.ackWaitMs,
    maxDeliver: config.maxDeliver,
    concurrency: config.concurrency,
    backoffMs: (attempt) => Math.min(300_000, 5_000 * 2 ** Math.max(0, attempt - 1)),
  };
}
