/**
 * Whether a request offers Engram's MCP tools (item 5 of the interface), and when to
 * nudge the model towards them. Clients name MCP tools after the server they were
 * registered under, each in its own way (`ClientProfile.mcpTools`: `mcp__engram__recall`,
 * a namespace `mcp__engram` holding `recall`, `engram-recall`, ...); a tool offered
 * under its bare name (the Agents SDKs) is Engram's when its description carries the marker.
 *
 * Pure: the inject step asks, and places what it decides (DESIGN section 6).
 */
import { ENGRAM_TOOL_MARKER, ENGRAM_TOOLS, RECALL_TOOL } from '../domain/engram-tools.js';
import type { MessageKinds, OfferedTool, ToolRef } from '../protocols/types.js';
import { CLIENTS } from '../clients/index.js';
import type { ClientProfile } from '../clients/types.js';

type ToolForm = NonNullable<ClientProfile['mcpTools']>;
const FORMS = new WeakMap<readonly ClientProfile[], ToolForm[]>();

/** The clients' MCP naming forms, gathered once per list of profiles (a request asks for each tool it offers). */
function toolForms(clients: readonly ClientProfile[]): ToolForm[] {
  let forms = FORMS.get(clients);
  if (!forms) FORMS.set(clients, (forms = clients.flatMap(({ mcpTools }) => (mcpTools ? [mcpTools] : []))));
  return forms;
}

/** Engram's own name for a tool (`recall`, ...), when `tool` is one of Engram's under some client's form. */
export function engramToolName(tool: ToolRef & { description?: string }, servers: readonly string[], clients: readonly ClientProfile[] = CLIENTS): string | undefined {
  const { name, namespace } = tool;
  const forms = toolForms(clients);
  for (const server of servers) {
    const s = server.toLowerCase();
    if (namespace !== undefined) {
      if (forms.some((form) => form.namespace?.(s) === namespace.toLowerCase()) && ENGRAM_TOOLS.includes(name)) return name;
      continue;
    }
    for (const form of forms) {
      const prefix = form.prefix(s);
      if (name.toLowerCase().startsWith(prefix) && ENGRAM_TOOLS.includes(name.slice(prefix.length))) return name.slice(prefix.length);
    }
  }
  if (namespace === undefined && ENGRAM_TOOLS.includes(name) && tool.description?.includes(ENGRAM_TOOL_MARKER)) return name;
  return undefined;
}

export interface MemoryTools {
  /** Engram's tools by Engram's names (`recall`), valued by the name the model knows them by here (`mcp__engram__recall`). */
  names: Readonly<Record<string, string>>;
  /** `recall` is named but not loaded (Claude Code's tool search): the model loads it before calling it. */
  deferred: boolean;
}

/** Engram's tools as this request offers them, or undefined when it does not offer `recall`. */
export function detectMemoryTools(offered: readonly OfferedTool[], servers: readonly string[], clients?: readonly ClientProfile[]): MemoryTools | undefined {
  const names: Record<string, string> = {};
  let deferred = false;
  for (const tool of offered) {
    const engramName = engramToolName(tool, servers, clients);
    if (!engramName || engramName in names) continue;
    names[engramName] = tool.namespace ? `${tool.namespace}.${tool.name}` : tool.name;
    if (engramName === RECALL_TOOL) deferred = tool.deferred === true;
  }
  return RECALL_TOOL in names ? { names, deferred } : undefined;
}

/** Turns (user inputs or tool results) without a `recall` call, or a nudge, before the reminder fires. */
export const REMINDER_EVERY = 6;
/** After a failed tool call the reminder fires at once, unless another reminder came this few turns ago (errors in a row). */
const REMINDER_MIN_GAP = 2;

export type Nudge = 'periodic' | 'failure';

/**
 * Whether the newest message (at `carrier`) should carry a reminder: the newest tool
 * result reports a failure (unless a reminder came just before: errors in a row get one),
 * or the model has gone `REMINDER_EVERY` turns since it last called `recall` or was last
 * nudged. `lastNudge` is the index of the latest message carrying the index or a
 * reminder, `lastReminder` of the latest carrying a reminder; -1 when none does.
 */
export function reminderDue(
  adapter: MessageKinds,
  messages: readonly unknown[],
  carrier: number,
  nudges: { lastNudge: number; lastReminder: number },
  servers: readonly string[],
  clients?: readonly ClientProfile[],
): Nudge | undefined {
  const { lastNudge, lastReminder } = nudges;
  let lastRecall = -1;
  for (let i = carrier - 1; i >= 0 && lastRecall === -1; i--) {
    if (adapter.calledTools(messages[i]).some((tool) => engramToolName(tool, servers, clients) === RECALL_TOOL)) lastRecall = i;
  }
  const turns = turnsBetween(adapter, messages, Math.max(lastRecall, lastNudge), carrier);
  if (adapter.toolResultFailed(messages[carrier]) && (lastReminder === -1 || turnsBetween(adapter, messages, lastReminder, carrier) > REMINDER_MIN_GAP)) {
    return 'failure';
  }
  return turns >= REMINDER_EVERY ? 'periodic' : undefined;
}

function turnsBetween(adapter: MessageKinds, messages: readonly unknown[], from: number, to: number): number {
  let turns = 0;
  for (let i = from + 1; i <= to; i++) if (adapter.isUserInput(messages[i]) || adapter.isToolResult(messages[i])) turns++;
  return turns;
}
