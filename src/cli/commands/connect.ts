/**
 * `engram connect <client>`: sets a client up to use an agent. Prints the configuration,
 * or with `--write` merges it into the client's files (see src/connect/).
 */
import os from 'node:os';
import path from 'node:path';
import { loadConnectConfig } from '../../config.js';
import { writeFiles } from '../../connect/apply.js';
import { FileFormatError } from '../../connect/json-file.js';
import { CLIENT_KINDS, findClientKind } from '../../connect/clients/index.js';
import { locations as locationsFor } from '../../connect/locations.js';
import { renderJson, renderText, type Report } from '../../connect/render.js';
import type { AgentInfo } from '../../connect/types.js';
import { agentPath, AGENT_OPTIONS, flag, requireOption, stringOption, type Command, type CommandContext } from '../command.js';
import { CliError, UsageError } from '../errors.js';
import { printJson } from '../output.js';
import { readSecret, secretGiven, secretOptions, secretSynopsis } from '../secret-input.js';
import type { AgentJson } from './agents.js';

const KIND_LIST = CLIENT_KINDS.map((kind) => `  ${kind.name.padEnd(17)} ${kind.summary}`).join('\n');

function agentInfo(agent: AgentJson): AgentInfo {
  const serverUrl = agent.base_url.replace(/\/v0\/orgs\/[^/]+\/agents\/[^/]+$/, '');
  return { id: agent.id, orgId: agent.org_id, name: agent.name, baseUrl: agent.base_url, mcpUrl: agent.mcp_url, serverUrl };
}

/** How a command that needs the agent's token is given it, for usage lines. */
export const TOKEN_SYNOPSIS = `${secretSynopsis('token', 'TOKEN')} | --new-token`;
/** The parser options of the token's forms and `--new-token`. */
export const TOKEN_OPTIONS = { ...secretOptions('token'), 'new-token': { type: 'boolean' } } as const;

/**
 * The token from `--token-env VAR`, `--token-file PATH`, `--token-stdin` or `--token`,
 * else ENGRAM_TOKEN, else (with `--new-token`) a token minted for this client.
 */
export async function resolveToken(context: CommandContext, kindName: string, fromEnv: string | undefined): Promise<{ token: string | undefined; minted: boolean }> {
  if (secretGiven(context, 'token') && flag(context, 'new-token')) throw new UsageError('--token and --new-token contradict each other');
  const given = await readSecret(context, 'token');
  if (flag(context, 'new-token')) {
    const created = await context.api().post<{ token: string }>(`${agentPath(context)}/tokens`, { name: `connect ${kindName}` });
    return { token: created.token, minted: true };
  }
  return { token: given ?? fromEnv, minted: false };
}

export const connectCommand: Command = {
  path: ['connect'],
  // The list of clients rides on the synopsis: `engram connect --help` and usage errors show it, `engram help` keeps one line.
  synopsis: `<client> --org NAME_OR_ID --agent NAME_OR_ID [--write] [${TOKEN_SYNOPSIS}] [--model NAME] [--home DIR] [--json]\n\nClients:\n${KIND_LIST}`,
  summary: "Set up a client to use an agent: prints its configuration, or merges it into the client's files with --write",
  positionals: 1,
  remote: true,
  options: {
    ...AGENT_OPTIONS,
    write: { type: 'boolean' },
    ...TOKEN_OPTIONS,
    model: { type: 'string' },
    home: { type: 'string' },
  },
  async run(context) {
    const name = context.positionals[0];
    if (name === undefined || name === '') throw new UsageError(`Which client? engram connect <client> --org ORG --agent AGENT\n\nClients:\n${KIND_LIST}`);
    const kind = findClientKind(name);
    if (!kind) throw new UsageError(`Unknown client "${name}"\n\nClients:\n${KIND_LIST}`);
    const org = requireOption(context, 'org');
    const agentRef = requireOption(context, 'agent');

    const environment = loadConnectConfig();
    const home = stringOption(context, 'home');
    // An explicit --home stands for a whole user account: the variables naming dirs inside the real one do not apply.
    const locations = locationsFor(
      home !== undefined
        ? { home: path.resolve(home) }
        : { home: environment.home ?? os.homedir(), configHome: environment.configHome, codexHome: environment.codexHome },
    );

    const agent = agentInfo(await context.api().get<AgentJson>(agentPath(context)));
    const { token, minted } = await resolveToken(context, kind.name, environment.token);
    const write = flag(context, 'write');
    if (write && kind.needsToken && token === undefined) {
      throw new CliError(`${kind.title} keeps the token in its file: set ENGRAM_TOKEN, pass --token-env VAR, --token-file PATH or --token-stdin, or use --new-token to mint one.`);
    }
    const setup = kind.plan({ agent, locations, token, model: stringOption(context, 'model') });

    const report: Report = {
      kind,
      agent,
      setup,
      locations,
      token,
      minted,
      tokenHint: `shown once when the agent was made; \`engram token create --org ${org} --agent ${agentRef}\` makes another (or add --new-token here)`,
    };
    if (write) {
      try {
        report.outcomes = writeFiles(setup.files);
      } catch (error) {
        if (error instanceof FileFormatError) throw new CliError(error.message);
        throw error;
      }
    }
    if (flag(context, 'json')) printJson(context.io, renderJson(report));
    else for (const line of renderText(report)) context.io.out(line);
  },
};
