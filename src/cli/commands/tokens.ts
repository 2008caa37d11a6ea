import { agentPath, AGENT_OPTIONS, positional, seg, stringOption, type Command } from '../command.js';
import { printResult, printTable, shortTime } from '../output.js';

interface TokenJson {
  id: string;
  name: string;
  prefix: string;
  token?: string;
  created_at: string;
  revoked_at?: string | null;
  last_used_at?: string | null;
}

export const tokenCommands: Command[] = [
  {
    path: ['token', 'create'],
    synopsis: '--org NAME_OR_ID --agent NAME_OR_ID [--name NAME] [--json]',
    summary: 'Create another access token for an agent (shown once)',
    remote: true,
    options: { ...AGENT_OPTIONS, name: { type: 'string' } },
    async run(context) {
      const name = stringOption(context, 'name');
      const token = await context.api().post<TokenJson>(`${agentPath(context)}/tokens`, name === undefined ? {} : { name });
      printResult(context, token, () => {
        context.io.out(`Created token "${token.name}" (id ${token.id}):`);
        context.io.out(`  ${token.token}`);
        context.io.out('It is shown only now: store it.');
      });
    },
  },
  {
    path: ['token', 'list'],
    synopsis: '--org NAME_OR_ID --agent NAME_OR_ID [--json]',
    summary: "List an agent's tokens (never their secrets)",
    remote: true,
    options: AGENT_OPTIONS,
    async run(context) {
      const { data } = await context.api().get<{ data: TokenJson[] }>(`${agentPath(context)}/tokens`);
      printResult(context, data, () => {
        const rows = data.map((token) => [
          token.id,
          token.name,
          `${token.prefix}…`,
          shortTime(token.created_at),
          shortTime(token.last_used_at),
          token.revoked_at ? `revoked ${shortTime(token.revoked_at)}` : 'live',
        ]);
        printTable(context.io, ['ID', 'NAME', 'PREFIX', 'CREATED', 'LAST USED', 'STATE'], rows, 'No tokens.');
      });
    },
  },
  {
    path: ['token', 'revoke'],
    synopsis: 'TOKEN_ID --org NAME_OR_ID --agent NAME_OR_ID [--json]',
    summary: 'Revoke a token; it stops working at once',
    positionals: 1,
    remote: true,
    options: AGENT_OPTIONS,
    async run(context) {
      const id = positional(context, 0, 'TOKEN_ID');
      const result = await context.api().delete<{ id: string }>(`${agentPath(context)}/tokens/${seg(id)}`);
      printResult(context, result, () => context.io.out(`Revoked token ${result.id}.`));
    },
  },
];
