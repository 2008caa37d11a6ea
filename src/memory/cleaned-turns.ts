/**
 * Turns already cleaned for extraction, remembered by a digest of their text. A client
 * re-sends the whole history every turn, so without it each turn redacts every earlier
 * turn again: the cost of settling a conversation would grow with its length. Only the
 * cleaned (redacted) text is kept, never the client's own; the digest stands for it.
 * Bounded by the characters it holds, least recently used first out.
 */
import { hash } from 'node:crypto';

export interface CleanedText {
  text: string;
  /** `text`'s UTF-8 length as an extraction request carries it (`escapedBytes`). */
  bytes: number;
}

export interface CleanedTurns {
  /** What `clean` makes of the text of digest `digest` (`textDigest`) under `shape` (the cut and window it was cleaned for). */
  get(digest: string, shape: string, clean: () => CleanedText): CleanedText;
  /** What the text was made under `shape` when it was cleaned already; undefined otherwise. */
  peek(digest: string, shape: string): CleanedText | undefined;
  /** Entries held, and the characters they count for (their texts and `ENTRY_OVERHEAD` each). */
  readonly size: { entries: number; chars: number };
}

/**
 * What an entry costs beside its text (its key, the map's slot), counted against the
 * bound: redaction costs some 20 µs a call however short the text, so short turns (a
 * tool call's one line) are remembered too, and the bound must see them.
 */
const ENTRY_OVERHEAD = 96;

export function createCleanedTurns(maxChars = 8 * 1024 * 1024): CleanedTurns {
  const entries = new Map<string, CleanedText>();
  let chars = 0;
  return {
    get(digest, shape, clean) {
      const key = `${shape}:${digest}`;
      const known = entries.get(key);
      if (known) {
        // Moved to the newest end of the map's order.
        entries.delete(key);
        entries.set(key, known);
        return known;
      }
      const cleaned = clean();
      const cost = cleaned.text.length + ENTRY_OVERHEAD;
      if (cost > maxChars) return cleaned;
      entries.set(key, cleaned);
      chars += cost;
      for (const [oldest, value] of entries) {
        if (chars <= maxChars) break;
        entries.delete(oldest);
        chars -= value.text.length + ENTRY_OVERHEAD;
      }
      return cleaned;
    },
    peek(digest, shape) {
      return entries.get(`${shape}:${digest}`);
    },
    get size() {
      return { entries: entries.size, chars };
    },
  };
}

/** The digest a text is remembered by: the text itself is never kept. */
export function textDigest(text: string): string {
  return hash('sha256', text, 'base64url');
}
