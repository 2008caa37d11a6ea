/**
 * What travels on the extraction subject: the new turns of one settled conversation,
 * already cleaned (Engram's blocks stripped, secrets redacted) and bounded in size, so
 * the bus never stores a secret or an unbounded transcript.
 */
import type { Turn } from '../domain/transcript.js';
import type { ProtocolId } from '../domain/types.js';
import { redactSecrets } from '../domain/redact.js';
import { truncateMiddle } from '../domain/text.js';
import type { ConsumerOptions, EventBus, PublishOptions } from './ports.js';
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
  /** Turns `firstTurn` .. `turnCount - 1`, cleaned and bounded by `buildExtractionJob`. */
  turns: Turn[];
  /** Transcript length covered by this job: the watermark once it is extracted. */
  turnCount: number;
  /**
   * Epoch ms of the final answer that completed these turns: the value the publisher
   * also writes to `ConversationState.lastFinalAt`. A state with a later `lastFinalAt`
   * means a newer job covers these turns too.
   */
  settledAt: number;
}

export interface BuildExtractionJobInput {
  agentId: string;
  orgId: string;
  conversationId: string;
  protocol: ProtocolId;
  model: string;
  /** All turns of the conversation, the final answer included. */
  turns: readonly Turn[];
  /** `ConversationState.extractedTurns`: turns before it were extracted already. */
  watermark: number;
  /** Bound on the job's text (`Config.extraction.maxBytes`), in UTF-8 bytes. */
  maxBytes: number;
  settledAt: number;
}

/** Role label and blank line around each turn, counted against `maxBytes`. */
const TURN_OVERHEAD = 16;

/**
 * The job for the turns after `watermark`, or `undefined` when none of them has any text.
 * Each turn is stripped of Engram's blocks and redacted, then a long one is cut in the
 * middle (a user or assistant turn to a quarter of `maxBytes`, a tool result to a
 * twelfth: outputs are long and their head and tail say the most). When the turns still
 * exceed `maxBytes`, the most recent ones are kept and `firstTurn` moves forward.
 */
export function buildExtractionJob(input: BuildExtractionJobInput): ExtractionJob | undefined {
  const start = Math.max(0, input.watermark);
  if (start >= input.turns.length) return undefined;
  const kept: Turn[] = [];
  let total = 0;
  let firstTurn = input.turns.length;
  for (let i = input.turns.length - 1; i >= start; i--) {
    const turn = input.turns[i];
    const text = cleanTurnText(turn, input.maxBytes);
    const size = Buffer.byteLength(text, 'utf8') + TURN_OVERHEAD;
    if (total + size > input.maxBytes && kept.length > 0) break;
    kept.push({ role: turn.role, text });
    total += size;
    firstTurn = i;
  }
  if (kept.every((turn) => turn.text.trim() === '')) return undefined;
  return {
    agentId: input.agentId,
    orgId: input.orgId,
    conversationId: input.conversationId,
    protocol: input.protocol,
    model: input.model,
    firstTurn,
    turns: kept.reverse(),
    turnCount: input.turns.length,
    settledAt: input.settledAt,
  };
}

function cleanTurnText(turn: Turn, maxBytes: number): string {
  const cap = Math.max(256, Math.floor(maxBytes / (turn.role === 'tool' ? 12 : 4)));
  // Redaction scans the whole text, so a huge output is first cut to a few times the cap.
  // The final cut keeps cap/2 from each end, far from this one, so a secret split here
  // lies in the part that is dropped anyway.
  const text = redactSecrets(truncateMiddle(stripEngramBlocks(turn.text), cap * 4));
  let out = truncateMiddle(text, cap);
  // A cap in characters can exceed the byte cap for non-Latin text; shrink once more.
  const bytes = Buffer.byteLength(out, 'utf8');
  if (bytes > cap) out = truncateMiddle(out, Math.floor((out.length * cap) / bytes));
  return out;
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
 * message id makes a second publish of the same turns (a retried request) a no-op.
 */
export async function publishExtractionJob(bus: EventBus, job: ExtractionJob, settleMs: number): Promise<void> {
  const options: PublishOptions = {
    notBefore: job.settledAt + settleMs,
    msgId: `${job.agentId}/${job.conversationId}/${job.turnCount}`,
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
