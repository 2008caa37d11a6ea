/**
 * The delimited blocks Engram adds to a conversation (DESIGN section 6): rendered here,
 * and recognised here so extraction and retrieval never read Engram's own words back as
 * the client's.
 */
import type { Reflection } from '../domain/types.js';
import { tagNeutraliser } from '../domain/framing.js';
import { oneLine } from '../domain/text.js';

export const REFLECTIONS_OPEN = '<engram-reflections>';
export const REFLECTIONS_CLOSE = '</engram-reflections>';
export const REFLECTIONS_PREAMBLE =
  'Memories learnt from earlier conversations (they may be outdated; verify before relying on them):';

/**
 * The injected block for `reflections`, in the given order:
 *
 * ```text
 * <engram-reflections>
 * Memories learnt from earlier conversations (...):
 * - [procedural] (deploy) Run tools/deploy.sh with --dry-run first.
 * </engram-reflections>
 * ```
 *
 * No leading or trailing newline; the protocol adapter decides how it joins the message.
 * Same input, same bytes (it is re-sent verbatim on later turns to keep prompt caches
 * valid). An empty list renders as the empty string: nothing to inject.
 */
export function renderReflectionsBlock(reflections: readonly Reflection[]): string {
  if (reflections.length === 0) return '';
  return [REFLECTIONS_OPEN, REFLECTIONS_PREAMBLE, ...reflections.map(reflectionLine), REFLECTIONS_CLOSE].join('\n');
}

/** One line of the block; also used to cost a reflection against the token budget. */
export function reflectionLine(reflection: Reflection): string {
  return `- [${reflection.kind}] (${neutralise(oneLine(reflection.topic))}) ${neutralise(oneLine(reflection.content))}`;
}

export const INDEX_OPEN = '<engram-memory-index>';
export const INDEX_CLOSE = '</engram-memory-index>';
export const REMINDER_OPEN = '<engram-reminder>';
export const REMINDER_CLOSE = '</engram-reminder>';

/** Engram's tools as the model knows them in this conversation (`mcp__engram__recall`, ...), by Engram's names. */
interface ToolNames {
  names: Readonly<Record<string, string>>;
  /** Named but not loaded yet (a client's tool search). */
  deferred: boolean;
}

const named = (tools: ToolNames, name: string) => `\`${tools.names[name] ?? name}\``;
const LOAD_FIRST = ' These tools are deferred: load them with your tool search before calling them.';

/**
 * The root memory index as injected on a conversation's first turn when the client has
 * Engram's tools: what the tools are for, then the index itself.
 */
export function renderIndexBlock(markdown: string, tools: ToolNames, scope?: string): string {
  // The tools' own requests do not say where the client runs: the model passes it on.
  const project = scope === undefined
    ? ''
    : ` This session works in project ${JSON.stringify(scope)}: give ${named(tools, 'recall')} and ${named(tools, 'remember')} ` +
      `\`project: ${JSON.stringify(scope)}\`, so what you store stays with it and you find its memories.`;
  const guide =
    `Your long-term memory (Engram) holds what earlier sessions learnt; its index follows. Call ${named(tools, 'recall')} ` +
    `for details before exploring or guessing, ${named(tools, 'remember')} what a later session should know, and ` +
    `${named(tools, 'forget')} what turns out to be wrong.${neutralise(project)}${tools.deferred ? LOAD_FIRST : ''}`;
  return [INDEX_OPEN, guide, '', neutralise(markdown.trimEnd()), INDEX_CLOSE].join('\n');
}

/** A short nudge towards the memory tools: after several turns without them, or after a failed tool call. */
export function renderReminderBlock(reason: 'periodic' | 'failure', tools: ToolNames): string {
  const text = reason === 'failure'
    ? `That tool call failed. Call ${named(tools, 'recall')} with the error or the task: it may have been solved before. ` +
      `Once it works, store the fix with ${named(tools, 'remember')}.`
    : `Consult your memory before going further: call ${named(tools, 'recall')} about what you are doing now; it may ` +
      `hold the location or the pitfall you need. Store what you learn with ${named(tools, 'remember')}.`;
  return `${REMINDER_OPEN}${text}${REMINDER_CLOSE}`;
}

/**
 * A stored text that happens to contain `</engram-reflections>` must not close the block
 * early (nor open another one), so the tag's `<` becomes `&lt;`: any `engram-` tag.
 */
const neutralise = tagNeutraliser(['engram-']);

/** One or more adjacent blocks with the newlines around them, removed as one unit. */
const BLOCKS = /(?:\r?\n)*(?:<engram-([a-z][a-z0-9-]*)>[\s\S]*?<\/engram-\1>(?:\r?\n)*)+/g;

/**
 * The client's text without any `<engram-...>...</engram-...>` block (reflections, and the
 * memory index or reminders), and without the newlines that joined a block to the text.
 * Between two pieces of client text the longer of the two newline runs stays, so
 * paragraphs stay apart. A text with no block is returned unchanged (same string).
 */
export function stripEngramBlocks(text: string): string {
  if (!text.includes('<engram-')) return text;
  return text.replace(BLOCKS, (match: string, _name: string, offset: number, input: string) => {
    if (offset === 0 || offset + match.length === input.length) return '';
    const lead = /^(?:\r?\n)*/.exec(match)?.[0] ?? '';
    const trail = /(?:\r?\n)*$/.exec(match)?.[0] ?? '';
    return lead.length >= trail.length ? lead : trail;
  });
}
