/**
 * `engram connect <client>`: sets a client up to use an agent. Prints the configuration,
 * or with `--write` merges it into the client's files (see src/connect/).
 */
import os from 'node:os';
import path from 'node:path';
import { loadConnectConfig } from '../../config.js';
import { writeFiles } from '../../connect/apply.js';
import { FileFormatError } from '../../connect/json-file.js';
import { CLIENT_KINDS, findClientKind } from '../../clients/index.js';
import { locations as locationsFor } from '../../connect/locations.js';
import { renderJson, renderText, type Report } from '../../connect/render.js';
import { modelIds, pickModel } from '../../connect/models.js';
import type { AgentInfo, ClientKind } from '../../connect/types.js';
import { serverUrlOf } from '../../domain/base-urls.js';
import { jsonOf } from '../api-client.js';
import { agentPath, AGENT_OPTIONS, flag, requireOption, stringOption, type Command, type CommandContext } from '../command.js';
import { CliError, UsageError } from '../errors.js';
import { printJson } from '../output.js';
import { readSecret, secretGiven, secretOptions, secretSynopsis } from '../secret-input.js';
import type { AgentJson } from './agents.js';

const KIND_LIST = CLIENT_KINDS.map((kind) => `  ${kind.name.padEnd(17)} ${kind.summary}`).join('\n');

function agentInfo(agent: AgentJson): AgentInfo {
  const serverUrl = serverUrlOf(agent.base_url);
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

/** The ids the agent's upstream lists, asked through Engram with the agent token; else why not. */
async function servedModels(agent: AgentInfo, token: string, family: 'openai' | 'anthropic'): Promise<{ ids?: string[]; why?: string }> {
  try {
    const response = await fetch(`${agent.baseUrl}/v1/models`, {
      headers: { authorization: `Bearer ${token}`, ...(family === 'anthropic' ? { 'anthropic-version': '2023-06-01' } : {}) },
      signal: AbortSignal.timeout(15_000),
    });
    const answer = jsonOf(await response.text());
    if (!response.ok) {
      const error = (answer as { error?: { message?: unknown } } | undefined)?.error;
      const message = typeof error?.message === 'string' ? `: ${error.message}` : '';
      return { why: `its model list answered HTTP ${response.status}${message}` };
    }
    const ids = modelIds(answer);
    return ids ? { ids } : { why: 'its answer to GET /v1/models is not a model list' };
  } catch (error) {
    return { why: `its model list could not be fetched: ${(error as Error).message}` };
  }
}

/**
 * The model the client's configuration names: `--model`, else one the agent's upstream
 * lists, else the kind's usual one, said to be a guess. Writing a file that would name a
 * model the upstream may not serve is refused: the client would fail on its first request
 * with a provider error far from its cause.
 */
async function chooseModel(
  context: CommandContext,
  kind: ClientKind,
  agent: AgentInfo,
  token: string | undefined,
  write: boolean,
): Promise<{ model: string | undefined; note?: string }> {
  const given = stringOption(context, 'model');
  if (given !== undefined || !kind.model) return { model: given };
  let why: string;
  if (token === undefined) {
    why = 'no agent token to ask with: set ENGRAM_TOKEN, or use --token-env VAR, --token-file PATH, --token-stdin or --new-token';
  } else {
    const served = await servedModels(agent, token, kind.model.family);
    const picked = served.ids && pickModel(served.ids, kind.model);
    if (picked) return { model: picked, note: `Model ${picked}: the agent's upstream serves it (one of ${served.ids!.length} it lists); --model picks another.` };
    why = served.why ?? 'its model list is empty';
  }
  if (write && kind.model.inFiles) {
    throw new CliError(`${kind.title}'s configuration names a model, and Engram cannot tell which ones the agent's upstream serves (${why}). Pass --model NAME with one it serves.`);
  }
  return {
    model: kind.model.fallback,
    note: `Model ${kind.model.fallback} is a guess: Engram could not ask the agent's upstream (${why}); --model NAME picks one it serves.`,
  };
}

export const connectCommand: Command = {
  path: ['connect'],
  // The list of clients rides on the synopsis: `engram connect --help` and usage errors show it, `engram help` keeps one line.
  synopsis: `<client> --org NAME_OR_ID --agent NAME_OR_ID [--write] [${TOKEN_SYNOPSIS}] [--model NAME] [--settings-env] [--home DIR] [--json]\n\nClients:\n${KIND_LIST}`,
  summary: "Set up a client to use an agent: prints its configuration, or merges it into the client's files with --write",
  positionals: 1,
  remote: true,
  options: {
    ...AGENT_OPTIONS,
    write: { type: 'boolean' },
    ...TOKEN_OPTIONS,
    model: { type: 'string' },
    'settings-env': { type: 'boolean' },
    home: { type: 'string' },
  },
  async run(context) {
    const name = context.positionals[0];
    if (name === undefined || name === '') throw new UsageError(`Which client? engram connect <client> --org ORG --agent AGENT\n\nClients:\n${KIND_LIST}`);
    const kind = findClientKind(name);
    if (!kind) throw new UsageError(`Unknown client "${name}"\n\nClients:\n${KIND_LIST}`);
    const org = requireOption(context, 'org');
    const agentRef = requireOption(context, 'agent');

    const environment = loadConnectConfig(undefined, kind.env);
    const home = stringOption(context, 'home');
    // An explicit --home stands for a whole user account: the variables naming dirs inside the real one do not apply.
    const locations = locationsFor(
      home !== undefined
        ? { home: path.resolve(home) }
        : { home: environment.home ?? os.homedir(), configHome: environment.configHome, env: environment.vars },
    );

    const agent = agentInfo(await context.api().get<AgentJson>(agentPath(context)));
    const { token, minted } = await resolveToken(context, kind.name, environment.token);
    const write = flag(context, 'write');
    const settingsEnv = flag(context, 'settings-env');
    if (settingsEnv && !kind.settingsEnv) throw new UsageError(`--settings-env is for ${CLIENT_KINDS.filter((other) => other.settingsEnv).map((other) => other.name).join(', ')} (its settings.json env)`);
    if (write && (kind.needsToken || settingsEnv) && token === undefined) {
      throw new CliError(`${kind.title} keeps the token in its file: set ENGRAM_TOKEN, pass --token-env VAR, --token-file PATH or --token-stdin, or use --new-token to mint one.`);
    }
    const { model, note } = await chooseModel(context, kind, agent, token, write);
    const setup = kind.plan({ agent, locations, token, model, settingsEnv });
    if (note) setup.notes.unshift(note);

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
