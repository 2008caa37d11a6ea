/**
 * Reads an uploaded transcript as a stream of JSON records without holding the body:
 * JSON lines (Codex rollouts, Claude Code transcripts, Copilot `events.jsonl`), or one
 * JSON document (an array of records, or `{ "events": [...] }`) when the body is not
 * line-delimited. Hooks upload files that are still being written, so a last line
 * without its newline that does not parse is a line cut short: it is left out, and the
 * complete lines are used.
 *
 * Whatever the body, reading it never holds the event loop for more than a few
 * milliseconds at a time (it yields between slices of the body), and holds at most one
 * record and a bounded look-ahead (`RecordReader`).
 */
import { createHash } from 'node:crypto';
import { setImmediate } from 'node:timers/promises';
import { EngramError, tooLarge } from '../errors.js';
import { RecordReader } from './record-reader.js';

export interface ReadOptions {
  /** Upload size limit, in bytes (413 beyond it). */
  maxBytes: number;
  /** A longer line is skipped (counted in `skipped`) instead of buffered; a longer record of a document refuses the upload (413). */
  maxLineBytes?: number;
  /** Most JSON tokens in one record (what bounds the values built for it); a line with more is skipped. */
  maxRecordTokens?: number;
}

export interface ReadSummary {
  /** Bytes of the body. */
  bytes: number;
  /** SHA-256 of the body (base64url): an identical re-upload is recognised by it. */
  sha256: string;
  /** Records handed to `onRecord`. */
  records: number;
  /** Lines that are not JSON (besides a truncated last line), lines over the limits, a document broken off. */
  skipped: number;
  /** The body ended in a partial line that was left out, or in a document that stops short. */
  truncatedTail: boolean;
  /** Read as one JSON document rather than JSON lines. */
  document: boolean;
}

const DEFAULT_MAX_LINE = 16 * 1024 * 1024;
const DEFAULT_MAX_TOKENS = 1024 * 1024;
/** The body is handed to the reader in slices of at most this many bytes... */
const SLICE = 16 * 1024;
/** ...and the event loop gets a turn once reading has run this long. */
const TURN_MS = 4;

/**
 * Feeds every record of `body` to `onRecord`, in order. An array record is spread into
 * its elements. Throws `EngramError` `body_too_large` past the limit, and
 * `invalid_request` when nothing in the body is JSON (empty, binary, or a document that
 * does not parse): a body that is unusable as a whole. What `onRecord` throws ends the
 * reading and goes through.
 */
export async function readJsonRecords(
  body: AsyncIterable<Buffer | string>,
  onRecord: (record: unknown) => void,
  options: ReadOptions,
): Promise<ReadSummary> {
  const reader = new RecordReader(onRecord, {
    maxLineBytes: Math.min(options.maxLineBytes ?? DEFAULT_MAX_LINE, options.maxBytes),
    maxRecordTokens: options.maxRecordTokens ?? DEFAULT_MAX_TOKENS,
  });
  const hash = createHash('sha256');
  let bytes = 0;
  let turnStarted = performance.now();
  /** Hands `chunks` to the reader slice by slice, and what it asks to read again before the rest. */
  const feed = async (chunks: Buffer[]) => {
    const queue = chunks.slice();
    while (queue.length > 0) {
      let next = queue.shift()!;
      if (next.length > SLICE) {
        queue.unshift(next.subarray(SLICE));
        next = next.subarray(0, SLICE);
      }
      const again = reader.write(next);
      if (again) queue.unshift(...again);
      if (performance.now() - turnStarted >= TURN_MS) {
        await setImmediate();
        turnStarted = performance.now();
      }
    }
  };

  for await (const piece of body) {
    const chunk = typeof piece === 'string' ? Buffer.from(piece) : piece;
    bytes += chunk.length;
    if (bytes > options.maxBytes) {
      throw tooLarge({ what: 'The transcript', bytes: options.maxBytes, setting: 'ENGRAM_TRANSCRIPT_MAX_BYTES' });
    }
    for (let at = 0; at < chunk.length; at += SLICE) {
      const slice = chunk.subarray(at, at + SLICE);
      hash.update(slice);
      await feed([slice]);
    }
  }
  for (let again = reader.end(); again; again = reader.end()) await feed(again);

  if (bytes === 0) throw new EngramError('invalid_request', 'The transcript is empty');
  if (reader.records === 0) {
    throw new EngramError('invalid_request', 'The body holds no JSON: expected the transcript file, one JSON object per line');
  }
  return {
    bytes,
    sha256: hash.digest('base64url'),
    records: reader.records,
    skipped: reader.skipped,
    truncatedTail: reader.truncatedTail,
    document: reader.document,
  };
}
