/**
 * When the client has Engram's MCP tools: the root memory index on the conversation's
 * first turn (re-given if the client dropped it, as a compaction does), later a reminder
 * to use the tools when `reminderDue` says so. Either joins the newest message. A client
 * whose session-start hook already put the index in its context (Engram's hook endpoint)
 * does not get it twice.
 */
import type { Insertion } from '../../domain/conversation-state.js';
import type { Visibility } from '../../domain/types.js';
import type { ClientProfile } from '../../clients/types.js';
import type { Deps } from '../../deps.js';
import { INDEX_OPEN, renderIndexBlock, renderReminderBlock } from '../../memory/engram-blocks.js';
import { visibleRootIndex, type RootIndexDeps } from '../../memory/root-index.js';
import type { MessageKinds } from '../../protocols/types.js';
import { newInsertion } from '../injection.js';
import { reminderDue, type MemoryTools, type Nudge } from '../memory-tools.js';

/** The index block's tag without its `<`, which JSON encoders may write as `\u003c`. */
const INDEX_TAG = Buffer.from(INDEX_OPEN.slice(1, -1));

/** Where the nudge goes and what the conversation already holds. */
export interface NudgeDraft {
  adapter: MessageKinds;
  /** The client's bytes, which may hold the index a session-start hook gave. */
  raw: Buffer;
  messages: unknown[];
  /** The newest message, which a nudge joins. */
  carrier: number;
  /** The blocks the forwarded request carries so far. */
  insertions: Insertion[];
}

/** Which nudge the newest message gets: the index, a reminder, or none. */
export function nudgeDue(
  { adapter, raw, messages, carrier, insertions }: NudgeDraft,
  serverNames: readonly string[],
  clients?: readonly ClientProfile[],
): 'index' | Nudge | undefined {
  if (!insertions.some((insertion) => insertion.kind === 'index') && !raw.includes(INDEX_TAG)) return 'index';
  const last = (...kinds: string[]) => Math.max(-1, ...insertions.filter((i) => kinds.includes(i.kind ?? '')).map((i) => i.index));
  return reminderDue(adapter, messages, carrier, { lastNudge: last('index', 'reminder'), lastReminder: last('reminder') }, serverNames, clients);
}

/** The root memory index block a conversation of `visible` gets now, with the reflections it lists. */
export async function indexBlock(deps: RootIndexDeps, agentId: string, visible: Visibility, tools: MemoryTools): Promise<Pick<Insertion, 'block' | 'reflections'>> {
  const { markdown, listed } = await visibleRootIndex(deps, agentId, visible);
  return { block: renderIndexBlock(markdown, tools, visible.scope), reflections: listed };
}

/** The nudge `nudgeDue` names, as a block for the newest message; the index is read for `visible` now. */
export async function memoryNudge(
  deps: RootIndexDeps & Pick<Deps, 'config' | 'clients'>,
  draft: NudgeDraft & { agentId: string; visible: Visibility; tools: MemoryTools },
): Promise<Insertion | undefined> {
  const { messages, carrier, tools } = draft;
  const due = nudgeDue(draft, deps.config.mcp.serverNames, deps.clients);
  if (due === 'index') {
    const { block, reflections } = await indexBlock(deps, draft.agentId, draft.visible, tools);
    return { ...newInsertion(messages, carrier, block, 'index'), reflections };
  }
  return due && newInsertion(messages, carrier, renderReminderBlock(due, tools), 'reminder');
}
