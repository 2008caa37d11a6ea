/**
 * The conversation's own instructions as an extraction job carries them: the sentences of
 * its system prompt, system and developer entries and the instruction files the client
 * puts in context (`ConversationReader.instructions`), so extraction neither asks for nor
 * stores what they already say (`restatement.ts`). Cleaned like the turns (Engram's blocks
 * stripped, secrets redacted), deduplicated, and bounded: extraction is never sent a
 * secret or a whole 40 KB system prompt.
 */
import { redactSecrets } from '../redaction/redact.js';
import { textDigest, type CleanedTurns } from './cleaned-turns.js';
import { stripEngramBlocks } from './engram-blocks.js';
import { wordBag } from './restatement.js';

/**
 * Share of `maxBytes` (one extraction call's text) the instruction sentences of a job may
 * take: 16 KB at the default 48 KB, which holds a long `CLAUDE.md` or `AGENTS.md` whole
 * (they come first) and the start of the client's own system prompt.
 */
export const INSTRUCTIONS_SHARE = 1 / 3;
/** Longest sentence kept, in characters: a longer "sentence" is a table or a blob, not a rule. */
const MAX_UNIT_CHARS = 600;
/** A sentence with fewer content words ("You are a coding agent.", a heading) says no rule of its own. */
const MIN_UNIT_WORDS = 2;

/**
 * The sentences of `texts` (most specific first: the adapter's order), each on one line,
 * Markdown list and heading marks removed, without repeats or sentences of fewer than
 * `MIN_UNIT_WORDS` content words, up to `maxBytes` UTF-8 bytes in all (later ones left
 * out). Each text is stripped of Engram's blocks and redacted first. With `cleaned`, the
 * whole list is remembered by a digest of the texts: a client re-sends the same system
 * prompt and instruction files every turn, so a turn's job finds them split already.
 */
export function instructionUnits(texts: readonly string[], maxBytes: number, cleaned?: CleanedTurns): string[] {
  if (!cleaned) return splitUnits(texts, maxBytes);
  return asUnits(
    cleaned.get(textDigest(texts.join(TEXT_SEPARATOR)), `instruction-units/${maxBytes}`, () => {
      const text = splitUnits(texts, maxBytes).join('\n');
      return { text, bytes: text.length };
    }).text,
  );
}

/** What `instructionUnits` gives for `texts` when `cleaned` remembers it; undefined otherwise (nothing is split). */
export function knownInstructionUnits(texts: readonly string[], maxBytes: number, cleaned: CleanedTurns): string[] | undefined {
  const known = cleaned.peek(textDigest(texts.join(TEXT_SEPARATOR)), `instruction-units/${maxBytes}`);
  return known && asUnits(known.text);
}

/** Each unit is one line (`sentences`), so the lines of a remembered list are its units. */
function asUnits(joined: string): string[] {
  return joined === '' ? [] : joined.split('\n');
}

/** Between two texts in the key of a remembered list: no client text holds it. */
const TEXT_SEPARATOR = '\u0000\u0001';

function splitUnits(texts: readonly string[], maxBytes: number): string[] {
  const units: string[] = [];
  const seen = new Set<string>();
  let bytes = 0;
  for (const text of texts) {
    const redacted = redactSecrets(stripEngramBlocks(text));
    for (const unit of sentences(redacted)) {
      const key = unit.toLowerCase();
      if (seen.has(key) || wordBag(unit).size < MIN_UNIT_WORDS) continue;
      const size = Buffer.byteLength(unit, 'utf8') + 1;
      if (bytes + size > maxBytes) return units;
      seen.add(key);
      units.push(unit);
      bytes += size;
    }
  }
  return units;
}

/** Lines, then sentences within a line; list bullets, numbering, heading and quote marks off; tag lines left out. */
function sentences(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const bare = line.replace(/^[\s>*+#-]*(?:\d+[.)]\s+)?/, '').trim();
    // A line that is only a tag (`<system-reminder>`, `<INSTRUCTIONS>`) is the client's wrapping.
    if (bare === '' || /^<\/?[\w-]+>$/.test(bare)) continue;
    for (const sentence of bare.split(/(?<=[.!?])\s+(?=[\p{Lu}`"'(\[])/u)) {
      const unit = sentence.trim();
      if (unit !== '' && unit.length <= MAX_UNIT_CHARS) out.push(unit);
    }
  }
  return out;
}

/**
 * Share of `maxBytes` the instruction sentences shown to the extraction model may take:
 * 6 KB at the default, the first sentences (the instruction files) of those the job
 * carries. Shown on every call of a job, so kept small; the deterministic filter reads
 * all the job carries.
 */
export const INSTRUCTIONS_SHOWN_SHARE = 1 / 8;

/** The first of `units` that fit in `maxBytes` UTF-8 bytes, one line each. */
export function shownInstructions(units: readonly string[], maxBytes: number): string[] {
  const shown: string[] = [];
  let bytes = 0;
  for (const unit of units) {
    bytes += Buffer.byteLength(unit, 'utf8') + 1;
    if (bytes > maxBytes) break;
    shown.push(unit);
  }
  return shown;
}
