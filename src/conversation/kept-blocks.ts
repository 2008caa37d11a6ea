/**
 * A kept block is re-applied only while it is true (DESIGN section 6). Every turn
 * re-applies, byte for byte, the blocks Engram added on earlier turns, so the provider's
 * prompt cache holds; but first each reflection a block shows is read again. A block that
 * shows one since deleted, edited, superseded or moved out of sight is rewritten in its
 * place (a replacement for a superseded one), or left out when nothing of it remains: one
 * prompt-cache miss, said in the request log (`rebuilt`). A deleted reflection's text
 * never reaches an upstream again.
 */
import type { Insertion } from '../domain/conversation-state.js';
import { isVisible, type Reflection, type Visibility } from '../domain/types.js';
import type { KeptChange, KeptReflection, Rebuilt, RebuiltReflection, ReflectionStore } from '../ports/index.js';
import { reflectionLine, renderReflectionsBlock } from '../memory/engram-blocks.js';
import { indexLine } from '../memory/root-index.js';

/** Replacements followed from a superseded reflection to the current one: far beyond real chains. */
const MAX_SUPERSEDE_HOPS = 8;

export interface KeptCheck {
  /** The insertions to re-apply, in their order: as they were, rewritten, or left out. */
  insertions: Insertion[];
  /** The reflections re-applied from the relevant-reflections blocks, with the turn that added each. */
  kept: KeptReflection[];
  /** What was rewritten and why; null when every block went on as it was. */
  rebuilt: Rebuilt | null;
  /** Reflections the rewritten blocks show that the conversation did not hold (replacements). */
  added: string[];
}

export interface KeptCheckContext {
  agentId: string;
  /** What the conversation may see (its project and end user). */
  visible: Visibility;
  reflections: Pick<ReflectionStore, 'getMany'>;
  /** Reflections the conversation holds already (injected, recalled): a replacement among them is not shown twice. */
  held: ReadonlySet<string>;
  /**
   * The root memory index block as it would be given now, in place of `stale` (same
   * message, same place); undefined when none can be given (the client no longer offers
   * Engram's tools): it is left out.
   */
  rebuildIndex(stale: Insertion): Promise<Insertion | undefined>;
}

/** The fate of one reflection a block shows. */
type Judged = { id: string; shown?: Reflection; change?: KeptChange; replacedBy?: string };

/**
 * Checks the insertions about to be re-applied (those whose messages the client still
 * sends, `planInjection`) against the reflections as stored now.
 */
export async function checkKeptBlocks(insertions: readonly Insertion[], context: KeptCheckContext): Promise<KeptCheck> {
  const shows = (insertion: Insertion) => insertion.kind === 'reflections' || insertion.kind === 'index';
  const ids = [...new Set(insertions.filter(shows).flatMap((insertion) => insertion.reflections ?? []))];
  const current = await readWithReplacements(context, ids);
  const out: Insertion[] = [];
  const kept: KeptReflection[] = [];
  const changes: RebuiltReflection[] = [];
  const blocks = new Set<'reflections' | 'index'>();
  const added: string[] = [];
  // Shown by a block re-applied before this one, or placed as a replacement: never twice.
  const shown = new Set<string>();
  for (const insertion of insertions) {
    if (!shows(insertion)) {
      out.push(insertion);
      continue;
    }
    if (insertion.reflections === undefined) {
      // Written before blocks said what they show: it cannot be checked, so it is not re-applied.
      blocks.add(insertion.kind === 'index' ? 'index' : 'reflections');
      continue;
    }
    const line = insertion.kind === 'index' ? indexLine : reflectionLine;
    const judged = insertion.reflections.map((id) => judge(id, insertion.block, line, current, context.visible));
    const changed = judged.filter((one) => one.change !== undefined);
    if (insertion.kind === 'index') {
      if (changed.length === 0) {
        out.push(insertion);
        continue;
      }
      blocks.add('index');
      changes.push(...changed.map(change));
      const rebuilt = await context.rebuildIndex(insertion);
      if (rebuilt) out.push(rebuilt);
      continue;
    }
    const turn = insertion.turn ?? 0;
    if (changed.length === 0) {
      out.push(insertion);
      for (const { id } of judged) {
        shown.add(id);
        kept.push({ reflectionId: id, turn });
      }
      continue;
    }
    blocks.add('reflections');
    changes.push(...changed.map(change));
    const place: Reflection[] = [];
    for (const one of judged) {
      const reflection = one.shown;
      if (!reflection || shown.has(reflection.id) || (reflection.id !== one.id && context.held.has(reflection.id))) continue;
      shown.add(reflection.id);
      place.push(reflection);
      if (reflection.id !== one.id) added.push(reflection.id);
      else kept.push({ reflectionId: reflection.id, turn });
    }
    if (place.length > 0) out.push({ ...insertion, block: renderReflectionsBlock(place), reflections: place.map((reflection) => reflection.id) });
  }
  const rebuilt = blocks.size > 0 ? { blocks: [...blocks], changes } : null;
  return { insertions: out, kept, rebuilt, added };
}

function change({ id, change, replacedBy }: Judged): RebuiltReflection {
  return { reflectionId: id, change: change!, ...(replacedBy === undefined ? {} : { replacedBy }) };
}

/**
 * What a block shows in place of reflection `id`: itself while it is current, visible and
 * shown with its present text; its current replacement, when it was superseded by one the
 * conversation may see; nothing when it was deleted or moved out of sight.
 */
function judge(id: string, block: string, line: (reflection: Reflection) => string, current: ReadonlyMap<string, Reflection>, visible: Visibility): Judged {
  const reflection = current.get(id);
  if (!reflection) return { id, change: 'deleted' };
  if (reflection.supersededBy !== undefined) {
    const replacement = replacementOf(reflection, current);
    return replacement && isVisible(replacement, visible)
      ? { id, change: 'superseded', replacedBy: replacement.id, shown: replacement }
      : { id, change: 'superseded' };
  }
  if (!isVisible(reflection, visible)) return { id, change: 'out_of_scope' };
  if (!block.includes(line(reflection))) return { id, change: 'edited', shown: reflection };
  return { id, shown: reflection };
}

/** The current reflection at the end of `reflection`'s chain of replacements, if it is stored. */
function replacementOf(reflection: Reflection, current: ReadonlyMap<string, Reflection>): Reflection | undefined {
  let at: Reflection | undefined = reflection;
  for (let hop = 0; at?.supersededBy !== undefined && hop < MAX_SUPERSEDE_HOPS; hop++) at = current.get(at.supersededBy);
  return at && at.supersededBy === undefined ? at : undefined;
}

/** The reflections `ids` as stored now, with the replacements of those superseded, read a round per hop. */
async function readWithReplacements(context: KeptCheckContext, ids: readonly string[]): Promise<Map<string, Reflection>> {
  const found = new Map<string, Reflection>();
  let wanted = ids;
  for (let hop = 0; wanted.length > 0 && hop <= MAX_SUPERSEDE_HOPS; hop++) {
    for (const reflection of await context.reflections.getMany(context.agentId, wanted)) found.set(reflection.id, reflection);
    const next = new Set<string>();
    for (const id of wanted) {
      const by = found.get(id)?.supersededBy;
      if (by !== undefined && !found.has(by)) next.add(by);
    }
    wanted = [...next];
  }
  return found;
}
