/**
 * One pass over an uploaded transcript: records through the format's reader into turns,
 * keeping only what ingestion needs, so memory stays bounded whatever the file's size:
 * a fingerprint per turn (to check, on the next upload of the growing file, that the turns
 * already counted are still the same) and the newest turns up to a text budget (older new
 * turns would not fit in the extraction calls anyway).
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

export async function collectTranscript(
  body: AsyncIterable<Buffer | string>,
  format: TranscriptFormat,
  options: CollectOptions,
): Promise<CollectedTranscript> {
  const reader = format.reader();
  // chain[i]: fingerprint of the first i turns, each folding the previous one in.
  const chain: string[] = [''];
  let window: Turn[] = [];
  let head = 0;
  let windowChars = 0;
  let dropped = 0;

  const read = await readJsonRecords(
    body,
    (record) => {
      for (const turn of reader.read(record)) {
        const digest = createHash('sha256').update(chain[chain.length - 1]).update(turn.role).update('\0').update(turn.text);
        chain.push(digest.digest('base64url').slice(0, 22));
        const text = truncateMiddle(turn.text, options.turnChars);
        window.push(text === turn.text ? turn : { role: turn.role, text });
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
    },
    { maxBytes: options.maxBytes },
  );
  const kept = window.slice(head);
  return {
    read,
    meta: reader.meta(),
    turnCount: chain.length - 1,
    window: kept,
    windowStart: dropped + head,
    fingerprint: (n) => chain[n] ?? '',
  };
}
