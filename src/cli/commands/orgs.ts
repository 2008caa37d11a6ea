import { flag, JSON_OPTION, positional, seg, type Command } from '../command.js';
import { UsageError } from '../errors.js';
import { printJson, printResult, printTable, shortTime } from '../output.js';

interface OrgJson {
  id: string;
  name: string;
  created_at: string;
}

export const orgCommands: Command[] = [
  {
    path: ['org', 'create'],
    synopsis: 'NAME [--json]',
    summary: 'Create an organisation',
    positionals: 1,
    remote: true,
    options: JSON_OPTION,
    async run(context) {
      const org = await context.api().post<OrgJson>('/v0/orgs', { name: positional(context, 0, 'NAME') });
      printResult(context, org, () => context.io.out(`Created organisation "${org.name}" (id ${org.id}).`));
    },
  },
  {
    path: ['org', 'list'],
    synopsis: '[--json]',
    summary: 'List organisations',
    remote: true,
    options: JSON_OPTION,
    async run(context) {
      const { data } = await context.api().get<{ data: OrgJson[] }>('/v0/orgs');
      if (flag(context, 'json')) printJson(context.io, data);
      else printTable(context.io, ['ID', 'NAME', 'CREATED'], data.map((org) => [org.id, org.name, shortTime(org.created_at)]), 'No organisations yet: engram org create NAME');
    },
  },
  {
    path: ['org', 'delete'],
    synopsis: 'NAME_OR_ID --yes [--json]',
    summary: 'Delete an organisation with all its agents, tokens and reflections',
    positionals: 1,
    remote: true,
    options: { yes: { type: 'boolean' }, ...JSON_OPTION },
    async run(context) {
      const org = positional(context, 0, 'NAME_OR_ID');
      if (!flag(context, 'yes')) throw new UsageError(`This deletes "${org}" with all its agents and reflections; add --yes to confirm`);
      const result = await context.api().delete<{ id: string }>(`/v0/orgs/${seg(org)}`);
      printResult(context, result, () => context.io.out(`Deleted organisation ${result.id}.`));
    },
  },
];
