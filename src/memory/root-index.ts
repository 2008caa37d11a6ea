/**
 * The root memory index (DESIGN section 3): a compact markdown table of contents of an
 * agent's reflections, injected on a conversation's first turn when the memory tools are
 * connected and served to session-start hooks. Rebuilt after every write. It lists
 * current reflections only: a superseded one is history (DESIGN section 5), never
 * injected, and the index is injected.
 */
import type { Reflection, Visibility } from '../domain/types.js';
import { oneLine, truncateEnd } from '../domain/text.js';
import type { ListQuery, ReflectionStore } from '../ports/index.js';
import type { Control } from '../control/control.js';

/** About 1,500 tokens: small enough to sit in every first turn. */
export const DEFAULT_INDEX_MAX_CHARS = 6000;
const LINE_MAX_CHARS = 120;
const TOPIC_MAX_CHARS = 60;
const TITLE = '# Memory index';
const TAIL_HEADING = '## More topics';
const LIST_PAGE = 1000;

export interface RootIndexOptions {
  /** Size cap of the markdown, in characters (approximate by a few characters). */
  maxChars?: number;
}

interface Topic {
  name: string;
  reflections: Reflection[];
}

/**
 * Markdown grouping `reflections` by topic (largest topic first, then by name); inside a
 * topic procedural first, then most used, most recently used, most recently updated, id. One line per
 * reflection until the size cap; the topics (or rest of a topic) that did not fit follow
 * as `- topic (N more)`. Superseded reflections among them are left out. The same
 * reflections always give the same bytes.
 */
export function buildRootIndex(all: readonly Reflection[], options: RootIndexOptions = {}): string {
  return rootIndexListing(all, options).markdown;
}

/** The root index (`buildRootIndex`) and the reflections it lists a line of, in its order. */
export interface RootIndexListing {
  markdown: string;
  listed: string[];
}

/** One reflection's line in the index. */
export function indexLine(reflection: Pick<Reflection, 'kind' | 'content'>): string {
  return `- [${reflection.kind}] ${truncateEnd(oneLine(reflection.content), LINE_MAX_CHARS)}`;
}

export function rootIndexListing(all: readonly Reflection[], options: RootIndexOptions = {}): RootIndexListing {
  const reflections = all.filter((r) => r.supersededBy === undefined);
  const maxChars = options.maxChars ?? DEFAULT_INDEX_MAX_CHARS;
  const listedIds: string[] = [];
  if (reflections.length === 0) {
    return { markdown: `${TITLE}\n\nNo memories yet. Reflections learnt from conversations will be listed here by topic.\n`, listed: listedIds };
  }
  const topics = groupByTopic(reflections);
  const procedural = reflections.filter((r) => r.kind === 'procedural').length;
  const out: string[] = [
    TITLE,
    '',
    `${count(reflections.length, 'reflection')} (${procedural} procedural, ${reflections.length - procedural} factual) ` +
      `in ${count(topics.length, 'topic')}. Procedural ones (how to avoid mistakes) and the most used come first.`,
  ];
  let size = out.reduce((sum, line) => sum + line.length + 1, 0);
  const maxTail = Math.floor(maxChars / 4);
  const moreLine = (topic: Topic, listed: number) => `- ${topicName(topic)} (${topic.reflections.length - listed} more)`;
  // suffix[i]: characters of the tail lines of topics i.. when none of them is listed.
  const suffix = new Array<number>(topics.length + 1).fill(0);
  for (let i = topics.length - 1; i >= 0; i--) suffix[i] = suffix[i + 1] + moreLine(topics[i], 0).length + 1;
  const tailCost = (i: number, listed: number) => {
    const rest = (listed < topics[i].reflections.length ? moreLine(topics[i], listed).length + 1 : 0) + suffix[i + 1];
    return rest === 0 ? 0 : Math.min(maxTail, TAIL_HEADING.length + 2 + rest);
  };

  const listed = new Array<number>(topics.length).fill(0);
  outer: for (let i = 0; i < topics.length; i++) {
    const heading = ['', `## ${topicName(topics[i])} (${topics[i].reflections.length})`];
    for (const [j, reflection] of topics[i].reflections.entries()) {
      const line = indexLine(reflection);
      const extra = line.length + 1 + (j === 0 ? heading[0].length + heading[1].length + 2 : 0);
      if (size + extra + tailCost(i, j + 1) > maxChars) break outer;
      if (j === 0) out.push(...heading);
      out.push(line);
      listedIds.push(reflection.id);
      size += extra;
      listed[i] = j + 1;
    }
  }

  const tail = topics.flatMap((topic, i) => (listed[i] < topic.reflections.length ? [{ topic, i }] : []));
  if (tail.length > 0) {
    out.push('', TAIL_HEADING);
    let tailSize = TAIL_HEADING.length + 2;
    for (const [k, { topic, i }] of tail.entries()) {
      const line = moreLine(topic, listed[i]);
      const left = tail.slice(k);
      const summary = `- … and ${count(left.length, 'more topic')} (${left.reduce((n, t) => n + t.topic.reflections.length - listed[t.i], 0)} reflections)`;
      // Room for this line and, unless it is the last, the closing summary line.
      const reserve = k === tail.length - 1 ? 0 : summary.length + 1;
      if (tailSize + line.length + 1 + reserve > maxTail && k > 0) {
        out.push(summary);
        break;
      }
      out.push(line);
      tailSize += line.length + 1;
    }
  }
  return { markdown: out.join('\n') + '\n', listed: listedIds };
}

/** The topic a reflection is filed under in the index: case and spacing ignored, `general` when none. */
export function topicKey(topic: string): string {
  return topic.trim().toLowerCase() || 'general';
}

function groupByTopic(reflections: readonly Reflection[]): Topic[] {
  const byName = new Map<string, Reflection[]>();
  for (const r of reflections) {
    const name = topicKey(r.topic);
    const list = byName.get(name);
    if (list) list.push(r);
    else byName.set(name, [r]);
  }
  const topics = [...byName].map(([name, list]) => ({ name, reflections: list.sort(compareInTopic) }));
  return topics.sort((a, b) => b.reflections.length - a.reflections.length || compareStrings(a.name, b.name));
}

function compareInTopic(a: Reflection, b: Reflection): number {
  const procedural = (r: Reflection) => (r.kind === 'procedural' ? 0 : 1);
  return (
    procedural(a) - procedural(b) ||
    b.useCount - a.useCount ||
    (b.lastUsedAt ?? 0) - (a.lastUsedAt ?? 0) ||
    b.updatedAt - a.updatedAt ||
    compareStrings(a.id, b.id)
  );
}

/** Code-unit order, not locale order: the bytes must not depend on the machine's ICU data. */
function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function topicName(topic: Topic): string {
  return truncateEnd(oneLine(topic.name), TOPIC_MAX_CHARS);
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

export interface RootIndexDeps {
  reflections: ReflectionStore;
  control: Control;
}

/**
 * Every reflection of an agent (superseded ones too, unless `filter` says otherwise), page
 * by page (adapters may cap one listing).
 */
export async function listAllReflections(
  store: ReflectionStore,
  agentId: string,
  filter: Omit<ListQuery, 'limit' | 'offset'> = {},
): Promise<Reflection[]> {
  const seen = new Map<string, Reflection>();
  for (let offset = 0; ; offset += LIST_PAGE) {
    const page = await store.list(agentId, { ...filter, limit: LIST_PAGE, offset });
    for (const r of page) seen.set(r.id, r);
    if (page.length < LIST_PAGE) break;
  }
  return [...seen.values()];
}

/**
 * Rebuilds and stores the agent's root index; returns the markdown. The stored index is
 * what a conversation without a project or a user sees (DESIGN section 13): the agent's
 * own reflections that hold everywhere. Scoped or personal ones never enter it.
 */
export async function rebuildRootIndex(
  agentId: string,
  deps: RootIndexDeps,
  options: RootIndexOptions = {},
): Promise<string> {
  const markdown = buildRootIndex(await listAllReflections(deps.reflections, agentId, { superseded: false, visible: {} }), options);
  await deps.control.indexes.put(agentId, markdown);
  return markdown;
}

/**
 * The index a conversation of this scope and user sees, built from what they may see now,
 * with the reflections it lists: what an injected index block shows, so that it can be
 * checked on later turns (`conversation/kept-blocks.ts`).
 */
export async function visibleRootIndex(deps: RootIndexDeps, agentId: string, visible: Visibility): Promise<RootIndexListing> {
  return rootIndexListing(await listAllReflections(deps.reflections, agentId, { superseded: false, visible }));
}

/**
 * The index a conversation of this scope and user sees: the stored one without either
 * (built on first use); with either, `visibleRootIndex` (read once per conversation, at
 * its start, so not stored per scope and user).
 */
export async function currentRootIndex(deps: RootIndexDeps, agentId: string, visible: Visibility = {}): Promise<string> {
  if (visible.scope !== undefined || visible.user !== undefined) return (await visibleRootIndex(deps, agentId, visible)).markdown;
  return (await deps.control.indexes.get(agentId)) ?? (await rebuildRootIndex(agentId, deps));
}
