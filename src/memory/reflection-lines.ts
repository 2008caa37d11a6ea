/**
 * Reflections shown to a model as data to work on (the tagging job's `<reflections>`):
 * one `[id] (kind) content` line each, inside one pair of tags. A line cannot forge the
 * framing: its content is a `dataLine` (on one line, so it cannot start a line of its own
 * that looks like another reflection, and with no `[ref_` of its own), and a `<` that would
 * open or close the block's tag is `&lt;` in it, by the rule every frame of Engram's
 * follows (`domain/framing.ts`), so it neither closes the list early nor opens another.
 */
import type { Reflection } from '../domain/types.js';
import { dataLine, tagNeutraliser } from '../domain/framing.js';
import { redactSecrets } from '../redaction/redact.js';

/** `<tag>`, the lines, `</tag>`, joined by newlines. `tag` is a plain name such as `reflections`. */
export function renderReflectionLines(tag: string, reflections: ReadonlyArray<Pick<Reflection, 'id' | 'kind' | 'content'>>): string {
  const neutralise = tagNeutraliser([tag]);
  // Stored content was redacted when written; an imported store may predate a rule.
  const line = (r: Pick<Reflection, 'id' | 'kind' | 'content'>) => `[${r.id}] (${r.kind}) ${dataLine(redactSecrets(r.content), neutralise)}`;
  return [`<${tag}>`, ...reflections.map(line), `</${tag}>`].join('\n');
}
