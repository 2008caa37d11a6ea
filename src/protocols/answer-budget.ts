/**
 * How much of one answer an assembler keeps (`ENGRAM_ANSWER_MAX_BYTES`, issue 31). The
 * relay bounds each SSE event, not their sum: an upstream that streams deltas without end
 * would grow one string until the heap gives out. Each assembler takes its text through
 * one budget: pieces are kept while they fit, the piece that crosses the line is cut at a
 * UTF-8 character boundary, and past it nothing more is kept, only counted, so what the
 * answer holds stays bounded however long it streams. The client's bytes never pass here.
 */
import type { AnswerTruncation } from '../domain/transcript.js';

/** Output slots (tool calls, content blocks, output items) an answer may open; an index past it is not assembled. */
export const MAX_ANSWER_PARTS = 1024;

/** Whether `index` names a slot an assembler may keep (a small non-negative integer). */
export function isPartIndex(index: unknown): index is number {
  return typeof index === 'number' && Number.isInteger(index) && index >= 0 && index < MAX_ANSWER_PARTS;
}

/** The longest prefix of `text` whose UTF-8 encoding fits `bytes`, never splitting a character. */
export function utf8Prefix(text: string, bytes: number): string {
  if (bytes <= 0) return '';
  const encoded = Buffer.from(text, 'utf8');
  if (encoded.length <= bytes) return text;
  let end = bytes;
  // Back off continuation bytes (10xxxxxx) to the start of the character that does not fit.
  while (end > 0 && (encoded[end] & 0xc0) === 0x80) end--;
  return encoded.subarray(0, end).toString('utf8');
}

export class AnswerBudget {
  readonly #maxBytes: number;
  #kept = 0;
  #seen = 0;
  /** Something did not fit: nothing more is kept, so no later piece is spliced on after a gap. */
  #full = false;

  constructor(maxBytes = Infinity) {
    this.#maxBytes = maxBytes;
  }

  /** The part of `piece` that still fits (all of it, a prefix, or ''); all of it is counted. */
  take(piece: string): string {
    if (piece === '') return piece;
    const [full, room] = [this.#full, this.#maxBytes - this.#kept];
    if (this.fits(Buffer.byteLength(piece, 'utf8'))) return piece;
    if (full) return '';
    const kept = utf8Prefix(piece, room);
    this.#kept += Buffer.byteLength(kept, 'utf8');
    return kept;
  }

  /** Whether a part of `bytes` fits whole (then it is kept), else nothing more is; counted either way. */
  fits(bytes: number): boolean {
    this.#seen += bytes;
    if (this.#full) return false;
    if (bytes <= this.#maxBytes - this.#kept) {
      this.#kept += bytes;
      return true;
    }
    this.#full = true;
    return false;
  }

  /** What was kept of how much, once something was not; undefined while everything was. */
  truncation(): AnswerTruncation | undefined {
    return this.#full ? { keptBytes: this.#kept, bytes: this.#seen } : undefined;
  }
}
