import { agentPath, AGENT_OPTIONS, positional, seg, type Command } from '../command.js';
import { printResult, printTable, shortTime } from '../output.js';

export interface DeadLetterJson {
  id: string;
  /** `extraction` or `tagging` (absent from older servers: extraction). */
  kind?: string;
  conversation_id: string | null;
  /** Null for a tagging job. */
  source: string | null;
  turns: number | null;
  /** Why it was given up, in words. */
  reason: string;
  /** The last failed delivery's own reason (absent from older servers). */
  last_error?: string | null;
  attempts: number;
  failed_at: string;
}

/** What a listing's SOURCE column says of a job: where an extraction's turns come from, or `tagging`. */
export function jobSource(job: { kind?: string; source: string | null }): string {
  return job.kind === 'tagging' ? 'tagging' : job.source ?? '';
}

export const deadLetterCommands: Command[] = [
  {
    path: ['dead-letters', 'list'],
    synopsis: '--org NAME_OR_ID --agent NAME_OR_ID [--json]',
    summary: "List an agent's extraction and tagging jobs that failed for good, with the reason",
    remote: true,
    options: AGENT_OPTIONS,
    async run(context) {
      const { data } = await context.api().get<{ data: DeadLetterJson[] }>(`${agentPath(context)}/extraction/dead-letters`);
      printResult(context, data, () => {
        const rows = data.map((dead) => [dead.id, shortTime(dead.failed_at), String(dead.attempts), jobSource(dead), dead.conversation_id ?? '', dead.reason]);
        printTable(context.io, ['ID', 'FAILED', 'ATTEMPTS', 'SOURCE', 'CONVERSATION', 'REASON'], rows, 'No dead letters.');
      });
    },
  },
  {
    path: ['dead-letters', 'retry'],
    synopsis: 'ID --org NAME_OR_ID --agent NAME_OR_ID [--json]',
    summary: 'Queue a dead-lettered extraction or tagging job again',
    positionals: 1,
    remote: true,
    options: AGENT_OPTIONS,
    async run(context) {
      const id = positional(context, 0, 'ID');
      const result = await context.api().post<{ id: string }>(`${agentPath(context)}/extraction/dead-letters/${seg(id)}/retry`, {});
      printResult(context, result, () => context.io.out(`Queued dead letter ${result.id} again.`));
    },
  },
];
