/**
 * Reflections shown to a model as data to work on (the tagging job's `<reflections>`):
 * one `[id] (kind) content` line each, inside one pair of tags. A line cannot forge the
 * framing: its content is put on one line (so it cannot start a line of its own that
 * looks like another reflection) and the tag's own `<` becomes `&lt;` in it, as in
 * Engram's injected blocks (`engram-blocks.ts`), so it neither closes the list early nor
 * opens another.
 */
import type { Reflection } from '../domain/types.js';
import { redactSecrets } from '../domain/redact.js';
import { oneLine } from '../domain/text.js';

/** `<tag>`, the lines, `</tag>`, joined by newlines. `tag` is a plain name such as `reflections`. */
export function renderReflectionLines(tag: string, reflections: ReadonlyArray<Pick<Reflection, 'id' | 'kind' | 'content'>>): string {
  const forged = new RegExp(`<(/?${tag})`, 'gi');
  // Stored content was redacted when written; an imported store may predate a rule.
  const line = (r: Pick<Reflection, 'id' | 'kind' | 'content'>) => `[${r.id}] (${r.kind}) ${oneLine(redactSecrets(r.content)).replace(forged, '&lt;$1')}`;
  return [`<${tag}>`, ...reflections.map(line), `</${tag}>`].join('\n');
}
