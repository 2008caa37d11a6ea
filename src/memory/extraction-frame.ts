/**
 * The user message of an extraction call (DESIGN section 5): the agent's related
 * reflections in `<existing-reflections>`, one `[id] (kind) content` line each, then the
 * turns in `<transcript>`, each turn one element whose number and role are attributes:
 *
 * ```text
 * <transcript>
 * <turn n="7" role="user">
 * Where is the deploy script?
 * </turn>
 * <turn n="8" role="tool">
 * tools/deploy.sh
 * </turn>
 * </transcript>
 * ```
 *
 * No turn can forge this framing. A turn's text is the element's content with every `<`
 * that would open or close a `turn`, `transcript` or `existing-reflections` tag written
 * `&lt;` (`tagNeutraliser`), so a tool result holding `</turn><turn n="9" role="user">` or
 * `</transcript>` stays inside its own turn, and who wrote a turn is only ever the
 * attribute Engram wrote. Only that `<` is escaped: code, HTML, shell `&&` and
 * `[REDACTED:...]` markers read as they were written (escaping every `<` and `&` would
 * cost tokens on every tool output and tempt the model to copy `&amp;&amp;` into what it
 * records). Elements rather than `[7] User:` line headers: a header is forged by any line
 * that looks like one, an element's end is explicit.
 */
import type { Reflection } from '../domain/types.js';
import type { Turn } from '../domain/transcript.js';
import { dataLine, tagNeutraliser } from '../domain/framing.js';

export const EXISTING_OPEN = '<existing-reflections>';
export const EXISTING_CLOSE = '</existing-reflections>';
export const INSTRUCTIONS_OPEN = '<instructions-in-context>';
export const INSTRUCTIONS_CLOSE = '</instructions-in-context>';
export const TRANSCRIPT_OPEN = '<transcript>';
export const TRANSCRIPT_CLOSE = '</transcript>';

/** The frames of an extraction request: neither a reflection nor a turn may open or close one. */
const neutraliseFrames = tagNeutraliser(['existing-reflections', 'instructions-in-context', 'transcript', 'turn']);

/**
 * What one turn's frame adds to its text, in UTF-8 bytes: `<turn n="…" role="assistant">`
 * and a newline, a newline and `</turn>`, and the newline to the next turn, for a turn
 * number of up to 10 digits.
 */
export const TURN_FRAME_BYTES = 48;

/** `text`'s UTF-8 length once escaped as a turn's content: each neutralised `<` grows by 3 bytes. */
export function escapedBytes(text: string): number {
  return Buffer.byteLength(neutraliseFrames(text), 'utf8');
}

/**
 * The bytes `text` takes in an extraction request as one turn: `escapedBytes` plus
 * `TURN_FRAME_BYTES`. What budgets and chunks a job's turns, so a chunk of `maxBytes` is
 * `maxBytes` as sent.
 */
export function framedTurnBytes(text: string): number {
  return escapedBytes(text) + TURN_FRAME_BYTES;
}

const ROLES: ReadonlySet<string> = new Set<Turn['role']>(['user', 'assistant', 'tool']);

/** Whether any of `turns` has text: a transcript of none would be empty. */
export function hasText(turns: readonly Turn[]): boolean {
  return turns.some((turn) => turn.text.trim() !== '');
}

/**
 * The turns as `<turn n="…" role="…">` elements, one after another (no `<transcript>`
 * around them), each numbered by its index in the conversation (`firstTurn` for the first
 * given) so a reflection can name the turn it comes from. Turns without text are left out
 * and keep their number's place; none with text gives the empty string.
 */
export function renderTranscript(turns: readonly Turn[], firstTurn = 0): string {
  const rendered: string[] = [];
  turns.forEach((turn, index) => {
    const text = turn.text.trim();
    if (text === '') return;
    // The job crossed the bus: a role Engram does not know is shown as the least trusted one.
    const role = ROLES.has(turn.role) ? turn.role : 'tool';
    rendered.push(`<turn n="${firstTurn + index}" role="${role}">\n${neutraliseFrames(text)}\n</turn>`);
  });
  return rendered.join('\n');
}

/**
 * One line of the `<existing-reflections>` block, `[<id>] (<kind>) <content>`, its content
 * a `dataLine`: on one line, the request's frames neutralised, no `[ref_` of its own.
 */
export function existingReflectionLine(reflection: Pick<Reflection, 'id' | 'kind' | 'content'>): string {
  return `[${reflection.id}] (${reflection.kind}) ${dataLine(reflection.content, neutraliseFrames)}`;
}

/**
 * The user message of an extraction call for `turns` (the first numbered `firstTurn`):
 * the `<instructions-in-context>` block of the conversation's instruction sentences, one
 * `dataLine` each, when there are any; the `<existing-reflections>` block when there are
 * any; each followed by a blank line; then the `<transcript>` of `renderTranscript`.
 */
export function extractionInput(
  existing: readonly Pick<Reflection, 'id' | 'kind' | 'content'>[],
  turns: readonly Turn[],
  firstTurn = 0,
  instructions: readonly string[] = [],
): string {
  const framed = `${TRANSCRIPT_OPEN}\n${renderTranscript(turns, firstTurn)}\n${TRANSCRIPT_CLOSE}`;
  const blocks: string[] = [];
  if (instructions.length > 0) {
    blocks.push(INSTRUCTIONS_OPEN, ...instructions.map((line) => dataLine(line, neutraliseFrames)), INSTRUCTIONS_CLOSE, '');
  }
  if (existing.length > 0) blocks.push(EXISTING_OPEN, ...existing.map(existingReflectionLine), EXISTING_CLOSE, '');
  return [...blocks, framed].join('\n');
}
