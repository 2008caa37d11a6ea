/**
 * `engram requests`: the agent's request log (DESIGN section 12) from the terminal, what
 * reached the model and why. A list (filtered as the API filters it) and one request in
 * words, worded as the dashboard's activity page words it (`domain/request-log-words.ts`).
 */
import {
  agentPath,
  AGENT_OPTIONS,
  flag,
  integerOption,
  positional,
  queryString,
  seg,
  stringOption,
  type Command,
  type CommandContext,
  type Io,
} from '../command.js';
import type { ApiClient } from '../api-client.js';
import { ApiError } from '../errors.js';
import { clip, printJson, printResult, printTable } from '../output.js';
import {
  injectedText,
  addedSummary,
  barText,
  keptChangeText,
  keptTurnText,
  nearMissText,
  reasonSentence,
  REBUILT_NOTE,
  rebuiltBlocksText,
  REQUEST_HEADINGS,
} from '../../domain/request-log-words.js';

/** A request as `GET …/requests` gives it. */
export interface RequestJson {
  id: string;
  at: string;
  protocol: string;
  conversation_id: string | null;
  status: number | null;
  outcome: string;
  latency_ms: number;
  upstream_ms: number | null;
  scope: string | null;
  user: string | null;
  injected: Array<{ reflection_id: string; relevance: number; why: string }>;
  kept: Array<{ reflection_id: string; turn: number }>;
  rebuilt: null | { blocks: string[]; changes: Array<{ reflection_id: string; change: string; replaced_by: string | null }> };
  reason: string | null;
  bar: number | null;
  near_misses: Array<{ reflection_id: string; relevance: number }>;
}

interface RequestPageJson {
  data: RequestJson[];
  next_cursor: string | null;
}

const LIST_OPTIONS = {
  ...AGENT_OPTIONS,
  conversation: { type: 'string' },
  outcome: { type: 'string' },
  'nothing-injected': { type: 'boolean' },
  limit: { type: 'string' },
  cursor: { type: 'string' },
} as const;

/** `2026-11-27T16:30:18.412Z` → `2026-11-27 16:30:18`: a request log wants the seconds. */
const time = (iso: string): string => iso.slice(0, 19).replace('T', ' ');

const ms = (value: number): string => `${Math.round(value)} ms`;

function listQuery(context: CommandContext): string {
  return queryString({
    conversation_id: stringOption(context, 'conversation'),
    outcome: stringOption(context, 'outcome'),
    nothing_added: flag(context, 'nothing-injected') ? 'true' : undefined,
    limit: integerOption(context, 'limit'),
    cursor: stringOption(context, 'cursor'),
  });
}

function printRequests(io: Io, page: RequestPageJson): void {
  const rows = page.data.map((entry) => [
    time(entry.at),
    entry.id,
    entry.protocol,
    `${entry.status ?? '-'} ${entry.outcome}`,
    addedSummary(entry),
    ms(entry.latency_ms),
  ]);
  printTable(io, ['TIME (UTC)', 'REQUEST', 'PROTOCOL', 'STATUS', 'INJECTED', 'LATENCY'], rows, 'No requests.');
  if (page.next_cursor) io.out(`Older requests: the same command with --cursor ${page.next_cursor}`);
}

/** The reflections' text by id, for what `show` names: a deleted one (or one the API refuses) is left out. */
async function contents(api: ApiClient, agent: string, ids: readonly string[]): Promise<Map<string, string>> {
  const found = await Promise.all(
    [...new Set(ids)].map(async (id) => {
      try {
        const reflection = await api.get<{ content: string }>(`${agent}/reflections/${seg(id)}`);
        return [id, reflection.content] as const;
      } catch (error) {
        if (error instanceof ApiError) return undefined;
        throw error;
      }
    }),
  );
  return new Map(found.filter((pair) => pair !== undefined));
}

/** One request in words: what it got and why, or why it got nothing, each reflection with its text when it still exists. */
export function printRequest(io: Io, entry: RequestJson, texts: ReadonlyMap<string, string>): void {
  // A reflection: its id and what the log says of it, then its text on a line of its own.
  const line = (id: string, said: string) => {
    const text = texts.get(id);
    io.out(`  ${id}  ${said}\n    ${text === undefined ? '(deleted since)' : clip(text, 200)}`);
  };
  io.out(`${entry.id}  ${time(entry.at)} UTC  ${entry.protocol}  ${entry.status ?? 'no status'} ${entry.outcome}`);
  const where = [
    entry.conversation_id ? `conversation ${entry.conversation_id}` : 'no conversation (it ended before one was found)',
    ...(entry.scope ? [`project ${entry.scope}`] : []),
    ...(entry.user ? [`end user ${entry.user}`] : []),
  ];
  io.out(where.join(', '));
  io.out(`took ${ms(entry.latency_ms)}${entry.upstream_ms === null ? ', never sent upstream' : ` (upstream ${ms(entry.upstream_ms)})`}`);
  if (entry.injected.length > 0) {
    io.out('');
    io.out(`${REQUEST_HEADINGS.injected}${entry.bar === null ? '' : ` (${barText(entry.bar)})`}:`);
    for (const one of entry.injected) line(one.reflection_id, injectedText(one.relevance, one.why));
  }
  if (entry.kept.length > 0) {
    io.out('');
    io.out(`${REQUEST_HEADINGS.kept}:`);
    for (const one of entry.kept) line(one.reflection_id, keptTurnText(one.turn));
  }
  if (entry.rebuilt) {
    io.out('');
    io.out(`${REQUEST_HEADINGS.rebuilt}: ${rebuiltBlocksText(entry.rebuilt.blocks)}, ${REBUILT_NOTE}.`);
    for (const change of entry.rebuilt.changes) io.out(`  ${change.reflection_id}: ${keptChangeText(change.change, change.replaced_by)}`);
  }
  if (entry.injected.length === 0) {
    io.out('');
    io.out(`${REQUEST_HEADINGS.nothing}: ${reasonSentence(entry.reason)}${entry.bar === null ? '' : `; ${barText(entry.bar)}`}.`);
    if (entry.near_misses.length > 0) {
      io.out(`${REQUEST_HEADINGS.nearMisses}:`);
      for (const miss of entry.near_misses) line(miss.reflection_id, nearMissText(miss.relevance));
    }
  }
}

export const requestCommands: Command[] = [
  {
    path: ['requests'],
    synopsis: '--org NAME_OR_ID --agent NAME_OR_ID [--conversation ID] [--outcome OUTCOME] [--nothing-injected] [--limit N] [--cursor CURSOR] [--json]',
    summary:
      "An agent's recent proxied requests, newest first: what each injected, or why nothing (see one with `requests show ID`). " +
      '--conversation: one conversation; --outcome: settled, upstream_error, interrupted, failed or aborted; ' +
      '--nothing-injected: only those that got nothing; --limit (default 50, at most 200) and --cursor page',
    remote: true,
    options: LIST_OPTIONS,
    async run(context) {
      const page = await context.api().get<RequestPageJson>(`${agentPath(context)}/requests${listQuery(context)}`);
      printResult(context, page, () => printRequests(context.io, page));
    },
  },
  {
    path: ['requests', 'show'],
    synopsis: 'ID --org NAME_OR_ID --agent NAME_OR_ID [--json]',
    summary:
      'One request in words (ID: its x-engram-request-id): each reflection injected with its relevance and why, those kept from earlier turns, ' +
      'what was rebuilt; when nothing was injected, why, the bar and the closest reflections under it',
    positionals: 1,
    remote: true,
    options: AGENT_OPTIONS,
    async run(context) {
      const id = positional(context, 0, 'ID');
      const agent = agentPath(context);
      const entry = await context.api().get<RequestJson>(`${agent}/requests/${seg(id)}`);
      if (flag(context, 'json')) {
        printJson(context.io, entry);
        return;
      }
      const ids = [...entry.injected, ...entry.kept, ...entry.near_misses].map((one) => one.reflection_id);
      printRequest(context.io, entry, await contents(context.api(), agent, ids));
    },
  },
];
