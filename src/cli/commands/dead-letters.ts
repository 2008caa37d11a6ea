import { agentPath, AGENT_OPTIONS, flag, positional, seg, type Command } from '../command.js';
import { printJson, printTable, shortTime } from '../output.js';

export interface DeadLetterJson {
  id: string;
  conversation_id: string | null;
  source: string;
  turns: number | null;
  reason: string;
  attempts: number;
  failed_at: string;
}

export const deadLetterCommands: Command[] = [
  {
    path: ['dead-letters', 'list'],
    synopsis: '--org NAME_OR_ID --agent NAME_OR_ID [--json]',
    summary: "List an agent's extraction jobs that failed for good, with the reason",
    remote: true,
    options: AGENT_OPTIONS,
    async run(context) {
      const { data } = await context.api().get<{ data: DeadLetterJson[] }>(`${agentPath(context)}/extraction/dead-letters`);
      if (flag(context, 'json')) printJson(context.io, data);
      else {
        const rows = data.map((dead) => [dead.id, shortTime(dead.failed_at), String(dead.attempts), dead.source, dead.conversation_id ?? '', dead.reason]);
        printTable(context.io, ['ID', 'FAILED', 'ATTEMPTS', 'SOURCE', 'CONVERSATION', 'REASON'], rows, 'No dead letters.');
      }
    },
  },
  {
    path: ['dead-letters', 'retry'],
    synopsis: 'ID --org NAME_OR_ID --agent NAME_OR_ID [--json]',
    summary: 'Queue a dead-lettered extraction job again',
    positionals: 1,
    remote: true,
    options: AGENT_OPTIONS,
    async run(context) {
      const id = positional(context, 0, 'ID');
      const result = await context.api().post<{ id: string }>(`${agentPath(context)}/extraction/dead-letters/${seg(id)}/retry`, {});
      if (flag(context, 'json')) printJson(context.io, result);
      else context.io.out(`Queued dead letter ${result.id} for extraction again.`);
    },
  },
];
