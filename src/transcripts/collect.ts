/**
 * One pass over an uploaded transcript: records through the format's reader into turns,
 * keeping only what ingestion needs, so memory stays bounded whatever the file's size:
 * a fingerprint per turn (to check, on the next upload of the growing file, that the turns
 * already counted are still the same; 17 bytes each) and the newest turns up to a text
 * budget (older new turns would not fit in the extraction calls anyway). A body whose
 * first records the format does not know is given up early, not read to its end.
 */
import { createHash } from 'node:crypto';
import type { Turn } from '../domain/transcript.js';
import { truncateMiddle } from '../domain/text.js';
import { readJsonRecords, type ReadSummary } from './json-records.js';
import type { TranscriptFormat, TranscriptMeta } from './types.js';

export interface CollectOptions {
  /** Upload size limit, in bytes. */
  maxBytes: number;
  /** Text kept of one turn, in characters (the middle of a longer one is cut). */
  turnChars: number;
  /** Text kept of the newest turns, in characters. */
  windowChars: number;
  /** Records read before giving up (`UnrecognisedTranscript`) when the format's reader knew none of them. Default: all. */
  recognisedWithin?: number;
}

/** The first records of the body are none of the format's: the rest is not read. */
export class UnrecognisedTranscript extends Error {
  override name = 'UnrecognisedTranscript';
  constructor(readonly records: number) {
    super(`None of the first ${records} records is one of the format's`);
  }
}

/** Bytes of a turn's fingerprint kept: the 22 base64url characters of one come from its first 17 bytes. */
const FINGERPRINT_BYTES = 17;

/**
 * Fingerprints of the first `n` turns, each folding the previous one in, kept as bytes
 * rather than strings (a 64 MB file of short turns has millions of them).
 */
class FingerprintChain {
  private bytes = Buffer.alloc(FINGERPRINT_BYTES * 1024);
  private last = '';
  length = 0;

  add(turn: Turn): void {
    const digest = createHash('sha256').update(this.last).update(turn.role).update('\0').update(turn.text).digest();
    if ((this.length + 1) * FINGERPRINT_BYTES > this.bytes.length) {
      const grown = Buffer.alloc(this.bytes.length * 2);
      this.bytes.copy(grown);
      this.bytes = grown;
    }
    digest.copy(this.bytes, this.length * FINGERPRINT_BYTES, 0, FINGERPRINT_BYTES);
    this.length++;
    this.last = this.at(this.length);
  }

  /** Fingerprint of the first `n` turns ('' for none, or past the end). */
  at(n: number): string {
    if (n <= 0 || n > this.length) return '';
    return this.bytes.toString('base64url', (n - 1) * FINGERPRINT_BYTES, n * FINGERPRINT_BYTES).slice(0, 22);
  }
}

export interface CollectedTranscript {
  read: ReadSummary;
  meta: TranscriptMeta;
  /** Turns in the whole transcript. */
  turnCount: number;
  /** The newest turns; `window[0]` is turn number `windowStart`. */
  window: Turn[];
  windowStart: number;
  /** Fingerprint of the first `n` turns (`n` from 0 to `turnCount`). */
  fingerprint(n: number): string;
}

/**
 * A copy of `text` that shares no memory with the string it was cut from: V8 keeps a
 * slice's parent alive, and the window would otherwise hold every record a kept turn
 * was cut from (UTF-16 keeps every code unit, lone surrogates too).
 */
function detached(text: string): string {
  return text.length < 64 ? text : Buffer.from(text, 'utf16le').toString('utf16le');
}

export async function collectTranscript(
  body: AsyncIterable<Buffer | string>,
  format: TranscriptFormat,
  options: CollectOptions,
): Promise<CollectedTranscript> {
  const reader = format.reader();
  const chain = new FingerprintChain();
  let window: Turn[] = [];
  let head = 0;
  let windowChars = 0;
  let dropped = 0;
  let records = 0;
  let recognised = false;

  const read = await readJsonRecords(
    body,
    (record) => {
      for (const turn of reader.read(record)) {
        chain.add(turn);
        const text = detached(truncateMiddle(turn.text, options.turnChars));
        window.push({ role: turn.role, text });
        windowChars += text.length;
        while (windowChars > options.windowChars && window.length - head > 1) {
          windowChars -= window[head].text.length;
          head++;
        }
        // Drop the consumed head now and then, not on every turn.
        if (head > 1024 && head * 2 > window.length) {
          window = window.slice(head);
          dropped += head;
          head = 0;
        }
      }
      if (!recognised && ++records >= (options.recognisedWithin ?? Infinity)) {
        if (reader.meta().recognised === 0) throw new UnrecognisedTranscript(records);
        recognised = true;
      }
    },
    { maxBytes: options.maxBytes },
  );
  const kept = window.slice(head);
  return {
    read,
    meta: reader.meta(),
    turnCount: chain.length,
    window: kept,
    windowStart: dropped + head,
    fingerprint: (n) => chain.at(n),
  };
}
