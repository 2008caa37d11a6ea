/**
 * What travels on the extraction subject: the new turns of one settled conversation,
 * bounded in size. A turn publishes them as sent (`UnredactedJob`, sealed on the bus);
 * the worker cleans them (Engram's blocks stripped, secrets redacted) into the
 * `ExtractionJob` it sends for extraction. An uploaded transcript's job is cleaned before
 * it is queued.
 */
import type { Turn } from '../domain/transcript.js';
import type { ReflectionSource, Visibility } from '../domain/types.js';
import { redactSecrets } from '../redaction/redact.js';
import { truncateMiddle } from '../domain/text.js';
import type { ConsumerOptions } from '../ports/index.js';
import type { JobPayload } from './job-payload.js';
import { textDigest, type CleanedText, type CleanedTurns } from './cleaned-turns.js';
import { stripEngramBlocks } from './engram-blocks.js';
import { INSTRUCTIONS_SHARE, instructionUnits, knownInstructionUnits } from './instruction-text.js';
import { TURN_FRAME_BYTES, escapedBytes, framedTurnBytes } from './extraction-frame.js';
import { offPair, omittedMiddle, trimToolOutput } from './tool-output.js';

export const EXTRACTION_SUBJECT = 'engram.extraction';

export interface ExtractionJob extends JobPayload {
  conversationId: string;
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
   * Epoch ms of the final answer that completed these turns: what decides, against the
   * conversation's state, whether a newer job replaced this one (`jobTurns`).
   */
  settledAt: number;
  /** Where the turns come from, recorded on the reflections; absent means `conversation`. */
  source?: ExtractionSource;
  /**
   * The sentences of the conversation's own instructions (system prompt, instruction
   * files in context), cleaned and bounded (`instruction-text.ts`): extraction is told not
   * to record them, and drops a proposal that only restates them (`restatement.ts`).
   * Absent when there are none (and on jobs queued before it existed).
   */
  instructions?: string[];
  /** The conversation's project and end user (DESIGN section 13): what is learnt is stored in them. */
  scope?: string;
  user?: string;
}

/** The job's conversation's scope and user: what its extraction is shown, and where it writes. */
export function jobVisibility(job: Pick<ExtractionJob, 'scope' | 'user'>): Visibility {
  return { ...(job.scope === undefined ? {} : { scope: job.scope }), ...(job.user === undefined ? {} : { user: job.user }) };
}

/** Extraction learns from proxied conversations and uploaded transcripts; `mcp` writes come another way. */
export type ExtractionSource = Exclude<ReflectionSource, 'mcp'>;

/** What the job carries as given (its conversation, model, settle time, source, scope and user), and what to build its turns from. */
export interface BuildExtractionJobInput
  extends Pick<ExtractionJob, 'agentId' | 'orgId' | 'conversationId' | 'protocol' | 'model' | 'settledAt' | 'source' | 'scope' | 'user'> {
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
  /** Turns cleaned by earlier jobs (the history a client re-sends each turn), cleaned once. */
  cleaned?: CleanedTurns;
  /** The conversation's instruction texts (`ConversationReader.instructions`), most specific first. */
  instructions?: readonly string[];
}

/** A turn's frame in the request (`extraction-frame.ts`), counted against `maxBytes`. */
const TURN_OVERHEAD = TURN_FRAME_BYTES;
/**
 * What a tool output is assumed to keep at least once trimmed, when deciding, before
 * cleaning it, that an older turn cannot fit: a long output can shrink to a line or two
 * and a marker (`trimToolOutput`). A user or assistant turn is assumed to keep its length
 * (up to its cap): only one that is mostly secrets shrinks much once redacted, and then
 * an older turn is left out although it would have fit.
 */
const TOOL_LEAST = 64;
/**
 * How much of one tool output is read, in multiples of its cap (32 KB at the default
 * `maxBytes`): its two ends, the middle of a longer one left unread. Wide enough for what
 * coding agents pass on whole (Claude Code cuts a command's output at 30,000 characters),
 * so an error in the middle of such a log is found and kept; bounded, so a 10 MB output
 * costs no more than a 32 KB one.
 */
const TOOL_WINDOW = 8;
/**
 * Tool output a job reads, in multiples of its budget (96 KB at the default `maxBytes`).
 * Trimmed outputs are small, so many more turns fit than before trimming, and reading and
 * trimming cost about 8 µs per KB: this bounds the work of building a job (about a
 * millisecond) however much a conversation's tools printed. Older outputs past it are
 * left unread, one line saying so; the user's and the assistant's turns are still taken.
 */
const TOOL_READ_LIMIT = 2;
/** What a tool output identical to an earlier one of the same job becomes. */
export const REPEATED_OUTPUT = '[same output as an earlier tool result above]';
/** What a tool output past `TOOL_READ_LIMIT` becomes. */
export function unreadOutput(chars: number): string {
  return `[tool output of ${chars} characters, not read]`;
}

/** What a job is about, whether its turns are redacted yet or not: what the bus's listings and the watermark read. */
export type JobHeader = Omit<ExtractionJob, 'turns' | 'instructions'>;

/**
 * What a settled turn publishes (DESIGN section 2): the conversation's new turns as the
 * client sent them, only stripped of Engram's blocks and cut to what cleaning reads, and
 * the instruction texts likewise. Never redacted: it exists only sealed on the bus
 * (`sealedBus`), and the consumer makes the `ExtractionJob` of it (`redactJob`) before
 * anything is sent or stored. So the client's answer ends once the turn is durable, and
 * redaction and the job's bounds are paid by the worker, for jobs that still run.
 */
export interface UnredactedJob extends JobHeader {
  unredacted: true;
  /** `firstTurn` .. `turnCount - 1`: the turns that may fit once redacted (`redactJob` keeps the newest that do). */
  turns: UnredactedTurn[];
  /** The instruction texts (`ConversationReader.instructions`), their first `INSTRUCTION_READ` shares only. */
  instructions?: string[];
  /** Or, when this process split the same texts before, their units (`instructionUnits`), redacted. */
  instructionUnits?: string[];
  /** The bounds it was selected for: the job is made by them whatever the worker's settings. */
  maxBytes: number;
  maxChunks?: number;
}

/** A turn of an `UnredactedJob`. */
export interface UnredactedTurn {
  role: Turn['role'];
  /**
   * Its text without Engram's blocks; cut (`cut`): only the two ends cleaning reads. Or,
   * when this process cleaned the same text before (`cleaned`), the cleaned text itself.
   */
  text: string;
  /** `textDigest` of its whole text without Engram's blocks: what its cleaning is remembered by, and repeats are told by. */
  digest?: string;
  /** A text longer than cleaning reads: its length, and where its head ends in `text`. */
  cut?: { chars: number; head: number };
  /** `text` is cleaned already: its size in the request (`CleanedText.bytes`). */
  cleaned?: number;
  /** A tool output past the job's read limit (`TOOL_READ_LIMIT`): its length; `text` is empty. */
  unread?: number;
}

/** What waits on the extraction subject: a turn's unredacted job, or a job made already (an uploaded transcript's, a deferred one). */
export type QueuedExtractionJob = ExtractionJob | UnredactedJob;

export function isUnredacted(job: QueuedExtractionJob): job is UnredactedJob {
  return (job as Partial<UnredactedJob>).unredacted === true;
}

/** Instruction text an unredacted job carries, in multiples of what the job keeps of it: short sentences and repeats are dropped. */
const INSTRUCTION_READ = 2;

/**
 * The job for the turns after `watermark`, or `undefined` when none of them has any text.
 * Each turn is stripped of Engram's blocks and redacted. A tool result is then trimmed
 * (`trimToolOutput`: its head, its tail and its error lines kept, repetitive and passing
 * output left out), and one that repeats an earlier tool result of the job exactly is
 * replaced by a note saying so: lessons live in the user's and the assistant's words,
 * which are never trimmed. A long turn is still cut in the middle (a user or assistant
 * turn to a quarter of `maxBytes`, a tool result to a twelfth). When the turns still
 * exceed `maxBytes * maxChunks`, the most recent ones are kept and `firstTurn` moves forward.
 *
 * Work is bounded by that budget, not by the conversation: turns are taken newest first,
 * an older turn is cleaned only if it may still fit, by its length before redaction, and
 * no more than `TOOL_READ_LIMIT` budgets of tool output are read.
 *
 * Two steps, which may run in two processes: `selectNewTurns` (the proxy, as the turn
 * settles: no redaction) and `redactJob` (the extraction worker).
 */
export function buildExtractionJob(input: BuildExtractionJobInput): ExtractionJob | undefined {
  const selected = selectNewTurns(input);
  return selected && redactJob(selected, input.cleaned);
}

/**
 * The first step of `buildExtractionJob`, cheap enough for the request path: the turns
 * after the watermark that may still fit once redacted, newest first, each cut to what
 * cleaning reads of it. Which may fit is told by a turn's size once cleaned as its length
 * says (`expectedSize`): the rule `redactJob` applies before it cleans a turn. The job
 * waiting on the bus is then a few times the size of the job it becomes at most (tool
 * outputs are read whole and trimmed by the worker). `undefined`: nothing new has any text.
 */
export function selectNewTurns(input: BuildExtractionJobInput): UnredactedJob | undefined {
  const offset = input.offset ?? 0;
  const budget = input.maxBytes * (input.maxChunks ?? 1);
  const start = Math.max(0, input.watermark - offset);
  if (start >= input.turns.length) return undefined;
  const kept: UnredactedTurn[] = [];
  let expected = 0;
  let readLeft = budget * TOOL_READ_LIMIT;
  let firstTurn = input.turns.length;
  let text = false;
  for (let i = input.turns.length - 1; i >= start; i--) {
    const turn = input.turns[i];
    const tool = turn.role === 'tool';
    const cap = turnCap(turn.role, input.maxBytes);
    const window = tool ? cap * TOOL_WINDOW : cap;
    const reads = tool ? Math.min(turn.text.length, window + 2 * SECRET_MARGIN) : 0;
    if (tool && kept.length > 0 && reads > readLeft) {
      const size = unreadSize(turn.text.length);
      if (expected + size > budget) break;
      kept.push({ role: 'tool', text: '', unread: turn.text.length });
      expected += size;
      firstTurn = i;
      continue;
    }
    readLeft -= reads;
    const stripped = stripEngramBlocks(turn.text);
    const digest = textDigest(stripped);
    // Cleaned already (an earlier turn of the conversation): carried cleaned, at its real size.
    const known = input.cleaned?.peek(digest, cleaningShape(cap, window, tool));
    const size = known ? known.bytes + TURN_OVERHEAD : expectedSize(stripped.length, cap, tool);
    if (kept.length > 0 && expected + size > budget) break;
    kept.push(known ? { role: turn.role, text: known.text, digest, cleaned: known.bytes } : { role: turn.role, digest, ...cutForCleaning(stripped, window) });
    text ||= /\S/.test(stripped);
    expected += size;
    firstTurn = i;
  }
  if (!text) return undefined;
  kept.reverse();
  const share = Math.floor(input.maxBytes * INSTRUCTIONS_SHARE);
  const instructions = input.instructions && instructionTexts(input.instructions, share * INSTRUCTION_READ);
  const units = instructions && input.cleaned && knownInstructionUnits(instructions, share, input.cleaned);
  return {
    unredacted: true,
    agentId: input.agentId,
    orgId: input.orgId,
    conversationId: input.conversationId,
    protocol: input.protocol,
    model: input.model,
    firstTurn: offset + firstTurn,
    turns: kept,
    turnCount: offset + input.turns.length,
    settledAt: input.settledAt,
    maxBytes: input.maxBytes,
    ...(input.maxChunks === undefined ? {} : { maxChunks: input.maxChunks }),
    ...(input.source && input.source !== 'conversation' ? { source: input.source } : {}),
    ...(units ? { instructionUnits: units } : instructions && instructions.length > 0 ? { instructions } : {}),
    ...jobVisibility(input),
  };
}

/**
 * The second step of `buildExtractionJob`: `job`'s turns redacted, trimmed and bounded,
 * newest first while they fit `maxBytes * maxChunks`; its instructions split into
 * sentences, redacted. `undefined`: no turn kept has any text.
 */
export function redactJob(job: UnredactedJob, cleaned?: CleanedTurns): ExtractionJob | undefined {
  const budget = job.maxBytes * (job.maxChunks ?? 1);
  const kept: Turn[] = [];
  /** The digest of each kept tool result's text, newest first like `kept`, to find repeats. */
  const sources: Array<string | undefined> = [];
  let total = 0;
  let firstTurn = job.turns.length;
  const keep = (role: Turn['role'], text: string, size: number, source?: string) => {
    kept.push({ role, text });
    sources.push(source);
    total += size;
  };
  for (let i = job.turns.length - 1; i >= 0; i--) {
    const turn = job.turns[i];
    const tool = turn.role === 'tool';
    if (turn.unread !== undefined) {
      // Its length only: an unread output is not even scanned.
      const text = turn.unread === 0 ? '' : unreadOutput(turn.unread);
      if (total + text.length + TURN_OVERHEAD > budget) break;
      keep('tool', text, text.length + TURN_OVERHEAD);
      firstTurn = i;
      continue;
    }
    const cap = turnCap(turn.role, job.maxBytes);
    const window = tool ? cap * TOOL_WINDOW : cap;
    const least = turn.cleaned === undefined ? expectedSize(turn.cut?.chars ?? turn.text.length, cap, tool) : turn.cleaned + TURN_OVERHEAD;
    if (kept.length > 0 && total + least > budget) break;
    const digest = turn.digest ?? textDigest(turn.text);
    const clean = (): CleanedText => (turn.cleaned === undefined ? cleanTurnText(turn, { cap, window, tool }) : { text: turn.text, bytes: turn.cleaned });
    const { text, bytes } = cleaned ? cleaned.get(digest, cleaningShape(cap, window, tool), clean) : clean();
    const size = bytes + TURN_OVERHEAD;
    if (total + size > budget && kept.length > 0) break;
    keep(turn.role, text, size, tool && /\S/.test(text) ? digest : undefined);
    firstTurn = i;
  }
  kept.reverse();
  markRepeats(kept, sources.reverse());
  if (!kept.some((turn) => /\S/.test(turn.text))) return undefined;
  const instructions = job.instructionUnits ?? (job.instructions ? instructionUnits(job.instructions, Math.floor(job.maxBytes * INSTRUCTIONS_SHARE), cleaned) : []);
  return {
    agentId: job.agentId,
    orgId: job.orgId,
    conversationId: job.conversationId,
    protocol: job.protocol,
    model: job.model,
    firstTurn: job.firstTurn + firstTurn,
    turns: kept,
    turnCount: job.turnCount,
    settledAt: job.settledAt,
    ...(job.source ? { source: job.source } : {}),
    ...(instructions.length > 0 ? { instructions } : {}),
    ...(job.deferred ? { deferred: job.deferred } : {}),
    ...jobVisibility(job),
  };
}

/** What a turn's cleaning is remembered under, beside its text's digest: its cap, its window, whether it is a tool output. */
function cleaningShape(cap: number, window: number, tool: boolean): string {
  return `${cap}/${window}/${tool ? 't' : ''}`;
}

/** What a turn of `chars` characters (stripped) is expected to take once cleaned, as `TOOL_LEAST` says. */
function expectedSize(chars: number, cap: number, tool: boolean): number {
  // UTF-8 takes at least a byte per UTF-16 unit, and a long turn is cut to about `cap`.
  return Math.min(chars, tool ? TOOL_LEAST : cap) + TURN_OVERHEAD;
}

/** What an unread output of `chars` characters takes in the request. */
function unreadSize(chars: number): number {
  return (chars === 0 ? 0 : unreadOutput(chars).length) + TURN_OVERHEAD;
}

/**
 * The texts, most specific first, up to `maxChars` in all: the last one taken is cut
 * after its last line or sentence within the limit.
 */
function instructionTexts(texts: readonly string[], maxChars: number): string[] {
  const out: string[] = [];
  let left = maxChars;
  for (const text of texts) {
    if (left <= 0) break;
    if (text.length <= left) {
      out.push(text);
      left -= text.length;
      continue;
    }
    // After its last whole sentence or line, so no half sentence is taken for one.
    const cut = Math.max(text.lastIndexOf('\n', left), text.lastIndexOf('. ', left - 2) + 1);
    out.push(text.slice(0, cut > 0 ? cut : left));
    break;
  }
  return out;
}

/**
 * Replaces each tool result that repeats an earlier one of the job exactly (a file read
 * again before an edit, a command re-run with the same output) by `REPEATED_OUTPUT`: the
 * extraction model reads the earlier one. Compared before cleaning (by the digests of
 * their whole texts), so outputs that only trimmed alike are not taken for repeats. The budget was counted with the repeats whole;
 * a job only ends up smaller than it could be.
 */
function markRepeats(turns: Turn[], sources: ReadonlyArray<string | undefined>): void {
  const seen = new Set<string>();
  for (let i = 0; i < turns.length; i++) {
    const source = sources[i];
    if (source === undefined) continue;
    if (seen.has(source) && turns[i].text.length > REPEATED_OUTPUT.length) turns[i] = { role: 'tool', text: REPEATED_OUTPUT };
    seen.add(source);
  }
}

/**
 * Splits a job's turns into consecutive runs of at most `maxBytes` of text each, as framed
 * and escaped in the request (a turn larger on its own is a run by itself): one extraction
 * call per run. Ends are indexes into `turns`, exclusive.
 */
export function chunkEnds(turns: readonly Turn[], maxBytes: number): number[] {
  const ends: number[] = [];
  let size = 0;
  for (let i = 0; i < turns.length; i++) {
    const bytes = framedTurnBytes(turns[i].text);
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
function turnCap(role: Turn['role'], maxBytes: number): number {
  return Math.max(256, Math.floor(maxBytes / (role === 'tool' ? 12 : 4)));
}

/**
 * A turn's text (already stripped of Engram's blocks) redacted, trimmed when it is a tool
 * result, and cut to `cap` bytes; and its size as the request carries it: escaped, framed
 * turns are longer than their text (`framedTurnBytes`), and the job's budget is the request's.
 */
function cleanTurnText(turn: UnredactedTurn, { cap, window, tool }: { cap: number; window: number; tool: boolean }): CleanedText {
  // Trimming comes after redaction: a secret spanning lines (a PEM key) is whole when
  // redacted, whatever lines trimming then keeps.
  let out = redactedEnds(turn, window);
  if (tool) out = trimToolOutput(out);
  out = truncateMiddle(out, cap);
  const bytes = Buffer.byteLength(out, 'utf8');
  // A cap in characters can exceed the byte cap for non-Latin text; shrink once more.
  if (bytes > cap) {
    out = truncateMiddle(out, Math.floor((out.length * cap) / bytes));
  }
  return { text: out, bytes: escapedBytes(out) };
}

/**
 * Longest secret redaction must see whole at the edge of a window: a 4096-bit RSA key in
 * PEM is about 3.3 KB, the other kinds are a few hundred characters at most.
 */
const SECRET_MARGIN = 4096;

/**
 * What cleaning reads of `text`: all of it, or when longer than `window`, its two ends,
 * each with `SECRET_MARGIN` more text beyond the cut (see `redactedEnds`).
 */
function cutForCleaning(text: string, window: number): Pick<UnredactedTurn, 'text' | 'cut'> {
  if (text.length <= window + 2 * SECRET_MARGIN) return { text };
  const half = Math.floor(window / 2);
  const head = text.slice(0, offPair(text, half + SECRET_MARGIN));
  const tail = text.slice(offPair(text, text.length - half - SECRET_MARGIN));
  return { text: head + tail, cut: { chars: text.length, head: head.length } };
}

/**
 * The turn's text redacted; when it was cut (`cutForCleaning`), only its two ends, with a
 * marker for the middle. Redaction scans all it is given, so a huge text is not given
 * whole. Each end is redacted with `SECRET_MARGIN` more text beyond the cut, which is then
 * dropped: a secret that the cut crosses is redacted whole there, never left half visible
 * at the edge (trimming may keep the lines next to the cut).
 */
function redactedEnds({ text, cut }: UnredactedTurn, window: number): string {
  if (!cut) return redactSecrets(text);
  const half = Math.floor(window / 2);
  const head = redactSecrets(text.slice(0, cut.head));
  const tail = redactSecrets(text.slice(cut.head));
  // Dropping the margin's length from the redacted end keeps what redaction made of the
  // first `half` characters of the text, however much it grew or shrank them; a secret cut
  // at the slice's end (at most SECRET_MARGIN long) starts after them. The same for the tail.
  let headEnd = offPair(head, Math.max(0, head.length - SECRET_MARGIN));
  let tailStart = offPair(tail, Math.min(tail.length, SECRET_MARGIN));
  // Cut at a line break when one is near, so no half line reaches trimming, which works by lines.
  const newline = head.lastIndexOf('\n', headEnd);
  if (newline >= 0 && headEnd - newline <= LINE_SLACK) headEnd = newline;
  const next = tail.indexOf('\n', tailStart);
  if (next >= 0 && next - tailStart <= LINE_SLACK) tailStart = next + 1;
  return `${head.slice(0, headEnd)}\n${omittedMiddle(cut.chars - 2 * half)}\n${tail.slice(tailStart)}`;
}

/** How far `redactedEnds` moves a cut to reach a line break. */
const LINE_SLACK = 1024;

/** Consumer settings for the extraction subject: exponential backoff from 5 s, capped at 5 min. */
export function extractionConsumerOptions(config: Pick<ConsumerOptions, 'ackWaitMs' | 'maxDeliver' | 'concurrency'>): ConsumerOptions {
  return {
    ackWaitMs: config.ackWaitMs,
    maxDeliver: config.maxDeliver,
    concurrency: config.concurrency,
    backoffMs: (attempt) => Math.min(300_000, 5_000 * 2 ** Math.max(0, attempt - 1)),
  };
}
