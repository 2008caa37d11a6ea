/**
 * The instructions a transcript records (`TranscriptMeta.instructions`): each text once,
 * first seen first, bounded. Clients record them again on every resume.
 */
import type { TranscriptMeta } from './types.js';

/** Characters kept from one transcript: a client's own prompt and a long instruction file. Extraction keeps less. */
const INSTRUCTION_CHARS = 64 * 1024;

/** A function adding one recorded instruction text to `meta.instructions`; anything but text is ignored. */
export function instructionCollector(meta: TranscriptMeta): (text: unknown) => void {
  const seen = new Set<string>();
  let chars = 0;
  return (text) => {
    if (typeof text !== 'string' || text.trim() === '' || seen.has(text) || chars + text.length > INSTRUCTION_CHARS) return;
    seen.add(text);
    chars += text.length;
    (meta.instructions ??= []).push(text);
  };
}
