/**
 * Reads an uploaded transcript as a stream of JSON records without holding the body:
 * JSON lines (Codex rollouts, Claude Code transcripts, Copilot `events.jsonl`), or one
 * JSON document (an array of records, or `{ "events": [...] }`) when the body is not
 * line-delimited. Hooks upload files that are still being written, so a last line
 * without its newline that does not parse is a line cut short: it is left out, and the
 * complete lines are used.
 */
import { createHash } from 'node:crypto';
import { EngramError } from '../errors.js';

export interface ReadOptions {
  /** Upload size limit, in bytes (413 beyond it). */
  maxBytes: number;
  /** A longer line is skipped (counted in `oversize`) instead of buffered. */
  maxLineBytes?: number;
}

export interface ReadSummary {
  /** Bytes of the body. */
  bytes: number;
  /** SHA-256 of the body (base64url): an identical re-upload is recognised by it. */
  sha256: string;
  /** Records handed to `onRecord`. */
  records: number;
  /** Lines that are not JSON (besides a truncated last line) and lines over `maxLineBytes`. */
  skipped: number;
  /** The body ended in a partial line that was left out. */
  truncatedTail: boolean;
  /** Read as one JSON document rather than JSON lines. */
  document: boolean;
}

const NEWLINE = 0x0a;
const DEFAULT_MAX_LINE = 16 * 1024 * 1024;

/**
 * Feeds every record of `body` to `onRecord`, in order. An array record is spread into
 * its elements. Throws `EngramError` `body_too_large` past the limit, and
 * `invalid_request` when nothing in the body is JSON (empty, binary, or a document that
 * does not parse): a body that is unusable as a whole.
 */
export async function readJsonRecords(
  body: AsyncIterable<Buffer | string>,
  onRecord: (record: unknown) => void,
  options: ReadOptions,
): Promise<ReadSummary> {
  const maxLine = Math.min(options.maxLineBytes ?? DEFAULT_MAX_LINE, options.maxBytes);
  const hash = createHash('sha256');
  let bytes = 0;
  let records = 0;
  let skipped = 0;
  let lines = 0;
  // Kept only while the body may still turn out to be one pretty-printed JSON document.
  let retained: Buffer[] | undefined = [];
  let documentCandidate = false;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let overlong = false;

  const emit = (value: unknown) => {
    if (Array.isArray(value)) {
      for (const item of value) {
        records++;
        onRecord(item);
      }
    } else {
      records++;
      onRecord(value);
    }
  };
  /** One complete line; false when it is not JSON. */
  const line = (buffer: Buffer): boolean => {
    const text = buffer.toString('utf8').trim();
    if (text === '') return true;
    lines++;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      // A first line that opens an object or array but does not close it: perhaps one
      // pretty-printed document. Its lines are only kept from here on, and read at the end.
      if (lines === 1 && (text[0] === '{' || text[0] === '[')) documentCandidate = true;
      else skipped++;
      return false;
    }
    emit(value);
    return true;
  };
  for await (const piece of body) {
    const chunk = typeof piece === 'string' ? Buffer.from(piece) : piece;
    bytes += chunk.length;
    if (bytes > options.maxBytes) {
      throw new EngramError('body_too_large', `The transcript is larger than the limit of ${options.maxBytes} bytes`);
    }
    hash.update(chunk);
    retained?.push(chunk);
    if (documentCandidate) continue;
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end !== -1 && !documentCandidate; end = chunk.indexOf(NEWLINE, start)) {
      if (!overlong) {
        pending.push(chunk.subarray(start, end));
        line(pending.length === 1 ? pending[0] : Buffer.concat(pending));
      }
      pending = [];
      pendingBytes = 0;
      overlong = false;
      start = end + 1;
    }
    if (documentCandidate) {
      pending = [];
      continue;
    }
    if (start < chunk.length && !overlong) {
      pendingBytes += chunk.length - start;
      if (pendingBytes > maxLine) {
        overlong = true;
        pending = [];
        skipped++;
        lines++;
      } else {
        pending.push(chunk.subarray(start));
      }
    }
    if (retained && !documentCandidate && lines > 0) retained = undefined;
  }

  let truncatedTail = false;
  // No newline after the last line: unless it parses, it is a line cut short, not a bad
  // line (a first line that opens a document is taken up as one below).
  if (!overlong && !documentCandidate && pending.length > 0 && !line(Buffer.concat(pending)) && !documentCandidate) {
    skipped--;
    truncatedTail = true;
  }
  let document = false;
  if (documentCandidate && retained) {
    const whole = Buffer.concat(retained);
    let value: unknown;
    let parsed = false;
    try {
      value = JSON.parse(whole.toString('utf8'));
      parsed = true;
    } catch {
      // Not one document either: JSON lines whose first line is damaged.
    }
    if (parsed) {
      document = true;
      const events = (value as { events?: unknown } | null)?.events;
      emit(Array.isArray(events) ? events : value);
    } else {
      documentCandidate = false;
      skipped++;
      const rest = whole.subarray(whole.indexOf(NEWLINE) === -1 ? whole.length : whole.indexOf(NEWLINE) + 1);
      truncatedTail = false;
      const parts = rest.toString('utf8').split('\n');
      const last = parts.pop() ?? '';
      for (const part of parts) line(Buffer.from(part));
      if (last.trim() !== '' && !line(Buffer.from(last))) {
        skipped--;
        truncatedTail = true;
      }
    }
  }
  if (bytes === 0) throw new EngramError('invalid_request', 'The transcript is empty');
  if (records === 0) {
    throw new EngramError('invalid_request', 'The body holds no JSON: expected the transcript file, one JSON object per line');
  }
  return { bytes, sha256: hash.digest('base64url'), records, skipped, truncatedTail, document };
}
